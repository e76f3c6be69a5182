import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ProviderManageResultSchema } from "../../../gen/pf/ai/v1/admin_pb.js";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { UsageResultSchema } from "../../../gen/pf/ai/v1/usage_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import { recordAudit } from "../db/audit.js";
import { resetBreaker } from "../db/breakers.js";
import type { ProviderRow } from "../db/entities.js";
import {
  allProviders,
  insertProvider,
  lockedProvider,
  providerAudited,
  providerByKey,
  providerToProto,
  saveProvider,
  type ProviderChanges,
} from "../db/providers.js";
import { checkedBaseUrl, checkSecretReference } from "../domain/secrets.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  "listProviders" | "registerProvider" | "updateProvider" | "disableProvider" | "enableProvider" | "resetProvider"
>;

const providerNotFound = (key: string) =>
  problem(404, "ai.provider.not_found", `No provider ${key} is registered.`, { key });

/** Providers and their breakers: secrets only as environment references, every change audited. */
export function providerHandlers(ctx: AiContext): Handlers {
  const { env, providerHosts } = ctx.settings;
  const answer = (row: ProviderRow) => create(ProviderManageResultSchema, { provider: providerToProto(row, env) });

  /**
   * Changes one provider in one transaction with its audit entry (before and after); a change that changes
   * nothing is answered as it stands, unaudited.
   */
  const change = (
    call: HandlerContext,
    key: string,
    action: string,
    apply: (em: EntityManager, row: ProviderRow) => Promise<ProviderRow>,
  ) =>
    ctx.transaction(async (em) => {
      const row = await lockedProvider(em, key);
      if (!row) throw providerNotFound(key);
      const before = providerAudited(row);
      const after = providerAudited(await apply(em, row));
      if (JSON.stringify(before) !== JSON.stringify(after))
        await recordAudit(em, {
          actor: callerOf(call).principal.sub,
          action,
          targetKind: "provider",
          targetKey: key,
          before,
          after,
          at: ctx.clock.now(),
        });
      return answer(row);
    });

  const setEnabled = (call: HandlerContext, key: string, enabled: boolean) =>
    change(call, key, enabled ? "provider.enabled" : "provider.disabled", (em, row) =>
      row.enabled === enabled ? Promise.resolve(row) : saveProvider(em, row, { enabled }, ctx.clock.now()),
    );

  return {
    async listProviders() {
      const rows = await allProviders(ctx.orm.em.fork());
      return create(UsageResultSchema, { providers: rows.map((row) => providerToProto(row, env)) });
    },

    /** 201 with the provider; its secret checked before anything else, so a value is never stored or echoed. */
    async registerProvider(request, call) {
      checkSecretReference(request);
      if (request.key === "") throw invalid("key", "A provider needs its key.");
      if (request.kind === "") throw invalid("kind", "A provider needs its kind: openai, anthropic or local.");
      const baseUrl = checkedBaseUrl(request.kind, request.baseUrl, providerHosts);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = await insertProvider(em, {
          key: request.key,
          kind: request.kind,
          baseUrl,
          apiKeyEnv: request.apiKeyEnv ?? "",
          enabled: request.enabled ?? true,
          timeoutMs: request.timeoutMs ?? 30_000,
          maxRetries: request.maxRetries ?? 2,
          breakerThreshold: request.breakerThreshold ?? 5,
          breakerOpenMs: request.breakerOpenMs ?? 30_000,
          at,
        });
        if (!row)
          throw problem(409, "ai.provider_exists", `A provider ${request.key} is registered already.`, {
            key: request.key,
          });
        await recordAudit(em, {
          actor: callerOf(call).principal.sub,
          action: "provider.registered",
          targetKind: "provider",
          targetKey: row.key,
          before: null,
          after: providerAudited(row),
          at,
        });
        return answer(row);
      });
    },

    /** The fields the request sets, by the rules of registration; its kind stays what it was registered as. */
    async updateProvider(request, call) {
      checkSecretReference(request);
      return change(call, request.key, "provider.updated", async (em, row) => {
        if (request.kind !== "" && request.kind !== row.kind)
          throw invalid("kind", `A provider's kind is fixed at registration (${row.key} is ${row.kind}).`);
        const changes: ProviderChanges = {
          baseUrl: request.baseUrl === undefined ? undefined : checkedBaseUrl(row.kind, request.baseUrl, providerHosts),
          apiKeyEnv: request.apiKeyEnv,
          enabled: request.enabled,
          timeoutMs: request.timeoutMs,
          maxRetries: request.maxRetries,
          breakerThreshold: request.breakerThreshold,
          breakerOpenMs: request.breakerOpenMs,
        };
        const set = Object.fromEntries(
          Object.entries(changes).filter(
            ([field, value]) => value !== undefined && value !== row[field as keyof ProviderChanges],
          ),
        );
        return Object.keys(set).length === 0 ? row : saveProvider(em, row, set, ctx.clock.now());
      });
    },

    disableProvider: (request, call) => setEnabled(call, request.key, false),
    enableProvider: (request, call) => setEnabled(call, request.key, true),

    /** Closes the breaker for every instance (they all read the same row). */
    async resetProvider(request, call) {
      return change(call, request.key, "provider.breaker_reset", async (em, row) => {
        await resetBreaker(em, row.key);
        return (await providerByKey(em, row.key)) ?? row;
      });
    },
  };
}
