import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ProviderManageResultSchema, type ProviderManageRequest } from "../../../gen/pf/ai/v1/admin_pb.js";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { UsageResultSchema } from "../../../gen/pf/ai/v1/usage_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { invalid } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import { recordAudit } from "../db/audit.js";
import { cacheStats, purgeCache, type CachePurge } from "../db/cache.js";
import { isOperation } from "../domain/operations.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "getCacheStats" | "purgeCache">;

/** The answer cache's statistics (usage readers) and purge (provider managers, audited). */
export function cacheHandlers(ctx: AiContext): Handlers {
  return {
    async getCacheStats() {
      const cache = await cacheStats(ctx.orm.em.fork(), ctx.settings, ctx.clock.now());
      return create(UsageResultSchema, { cache });
    },

    /** Every entry, or only those of a namespace, operation or model; answers how many went. */
    async purgeCache(request, call) {
      const filter = purgeOf(request);
      const at = ctx.clock.now();
      const purged = await ctx.transaction(async (em) => {
        const purged = await purgeCache(em, filter, at);
        await recordAudit(em, {
          actor: callerOf(call).principal.sub,
          action: "cache.purged",
          targetKind: "cache",
          targetKey: "cache",
          before: null,
          after: {
            namespace: request.namespace,
            operation: request.operation,
            model: request.model,
            purged,
          },
          at,
        });
        return purged;
      });
      return create(ProviderManageResultSchema, { purged });
    },
  };
}

/** The purge's filter: an operation must be one, and a model is `<provider>/<model>`. */
function purgeOf(request: ProviderManageRequest): CachePurge {
  const { namespace, operation, model } = request;
  if (operation !== "" && !isOperation(operation))
    throw invalid("operation", "Name an operation: chat, generate, summarize, classify, extract, enrich or embed.");
  const slash = model.indexOf("/");
  if (model !== "" && (slash <= 0 || slash === model.length - 1))
    throw invalid("model", "Name the model as <provider>/<model>.");
  return {
    namespace: namespace || undefined,
    operation: operation || undefined,
    model: model === "" ? undefined : { provider: model.slice(0, slash), model: model.slice(slash + 1) },
  };
}
