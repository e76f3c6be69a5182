import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ProviderManageResultSchema } from "../../../gen/pf/ai/v1/admin_pb.js";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { UsageResultSchema } from "../../../gen/pf/ai/v1/usage_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import { recordAudit } from "../db/audit.js";
import {
  insertModel,
  lockedModel,
  modelAudited,
  modelsOf,
  modelToProto,
  saveModel,
  type ModelChanges,
} from "../db/models.js";
import { providerByKey } from "../db/providers.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "listModels" | "registerModel" | "updateModel">;

const micros = (value: bigint | undefined) => (value === undefined ? undefined : Number(value));

/** A model answers no call longer than its context: its output limit fits in it. */
function checkLimits(contextTokens: number, maxOutputTokens: number): void {
  if (maxOutputTokens > contextTokens)
    throw invalid(
      "max_output_tokens",
      `max_output_tokens (${maxOutputTokens}) exceeds context_tokens (${contextTokens}).`,
    );
}

/** Models of providers: their operations, limits and prices; every change audited. */
export function modelHandlers(ctx: AiContext): Handlers {
  return {
    async listModels(request) {
      const rows = await modelsOf(ctx.orm.em.fork(), request.provider);
      return create(UsageResultSchema, { models: rows.map(modelToProto) });
    },

    /** 201 with the model; 404 for a provider not registered, 409 for a model registered already. */
    async registerModel(request, call) {
      if (request.provider === "") throw invalid("provider", "A model names its provider.");
      if (request.model === "") throw invalid("model", "A model needs its name.");
      if (request.operations.length === 0) throw invalid("operations", "A model serves at least one operation.");
      if (request.contextTokens === undefined) throw invalid("context_tokens", "A model needs its context window.");
      if (request.maxOutputTokens === undefined) throw invalid("max_output_tokens", "A model needs its output limit.");
      checkLimits(request.contextTokens, request.maxOutputTokens);
      return ctx.transaction(async (em) => {
        if (!(await providerByKey(em, request.provider)))
          throw problem(404, "ai.provider.not_found", `No provider ${request.provider} is registered.`, {
            key: request.provider,
          });
        const at = ctx.clock.now();
        const row = await insertModel(em, {
          provider: request.provider,
          model: request.model,
          operations: request.operations,
          contextTokens: request.contextTokens!,
          maxOutputTokens: request.maxOutputTokens!,
          inputMicrosPer1k: micros(request.inputMicrosPer1k) ?? 0,
          outputMicrosPer1k: micros(request.outputMicrosPer1k) ?? 0,
          enabled: request.enabled ?? true,
          at,
        });
        const name = `${request.provider}/${request.model}`;
        if (!row) throw problem(409, "ai.model_exists", `The model ${name} is registered already.`, { model: name });
        await recordAudit(em, {
          actor: callerOf(call).principal.sub,
          action: "model.registered",
          targetKind: "model",
          targetKey: name,
          before: null,
          after: modelAudited(row),
          at,
        });
        return create(ProviderManageResultSchema, { model: modelToProto(row) });
      });
    },

    /** The fields the request sets (operations when it lists any); a change that changes nothing goes unaudited. */
    async updateModel(request, call) {
      const name = `${request.provider}/${request.model}`;
      return ctx.transaction(async (em) => {
        const row = await lockedModel(em, request.provider, request.model);
        if (!row) throw problem(404, "ai.model.not_found", `No model ${name} is registered.`, { model: name });
        const changes: ModelChanges = {
          operations: request.operations.length === 0 ? undefined : request.operations,
          contextTokens: request.contextTokens,
          maxOutputTokens: request.maxOutputTokens,
          inputMicrosPer1k: micros(request.inputMicrosPer1k),
          outputMicrosPer1k: micros(request.outputMicrosPer1k),
          enabled: request.enabled,
        };
        checkLimits(changes.contextTokens ?? row.contextTokens, changes.maxOutputTokens ?? row.maxOutputTokens);
        const before = modelAudited(row);
        const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
        const after = modelAudited({ ...row, ...set });
        if (JSON.stringify(before) !== JSON.stringify(after)) {
          const at = ctx.clock.now();
          await saveModel(em, row, set, at);
          await recordAudit(em, {
            actor: callerOf(call).principal.sub,
            action: "model.updated",
            targetKind: "model",
            targetKey: name,
            before,
            after,
            at,
          });
        }
        return create(ProviderManageResultSchema, { model: modelToProto(row) });
      });
    },
  };
}
