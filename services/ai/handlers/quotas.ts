import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ProviderManageResultSchema } from "../../../gen/pf/ai/v1/admin_pb.js";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { UsageResultSchema } from "../../../gen/pf/ai/v1/usage_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { invalid } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import { recordAudit } from "../db/audit.js";
import { quotasWithUse, setQuota, type QuotaRow } from "../db/quotas.js";
import { EVERY_SUBJECT, isQuotaScope, isQuotaWindow } from "../domain/quota-scopes.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "listQuotas" | "setQuota">;

/** The largest limit a quota holds (its column is a 32-bit integer). */
const LIMIT_MAX = 2_147_483_647;

/** Quotas and their windows: read by usage readers, set by provider managers (audited). */
export function quotaHandlers(ctx: AiContext): Handlers {
  return {
    /** Every quota (or those counting a namespace or caller) with its current window and what was used in it. */
    async listQuotas(request) {
      const filter = { namespace: request.namespace || undefined, caller: request.caller || undefined };
      const quotas = await quotasWithUse(ctx.orm.em.fork(), filter, ctx.clock.now());
      return create(UsageResultSchema, { quotas });
    },

    /** Sets a quota; the same scope, subject and window again replaces its limits (an unset limit is 0: none). */
    async setQuota(request, call) {
      const { scope, window } = request;
      const subject = request.subject.trim();
      if (!isQuotaScope(scope)) throw invalid("scope", "Name what the quota counts per: namespace, caller or model.");
      if (subject === "") throw invalid("subject", `Name the ${scope} the quota counts, or * for each ${scope} alike.`);
      if (scope === "model" && subject !== EVERY_SUBJECT && !/^[^/]+\/.+$/.test(subject))
        throw invalid("subject", "Name the model as <provider>/<model>, or * for each model alike.");
      if (!isQuotaWindow(window)) throw invalid("window", "Name the quota's window: minute, hour or day.");
      const maxRequests = request.maxRequests ?? 0;
      const maxTokens = request.maxTokens ?? 0;
      if (maxRequests > LIMIT_MAX) throw invalid("max_requests", `A quota holds at most ${LIMIT_MAX} requests.`);
      if (maxTokens > LIMIT_MAX) throw invalid("max_tokens", `A quota holds at most ${LIMIT_MAX} tokens.`);
      const at = ctx.clock.now();
      const quota = await ctx.transaction(async (em) => {
        const { before, after } = await setQuota(em, { scope, subject, window, maxRequests, maxTokens }, at);
        await recordAudit(em, {
          actor: callerOf(call).principal.sub,
          action: "quota.set",
          targetKind: "quota",
          targetKey: after.id,
          before: before ? audited(before) : null,
          after: audited(after),
          at,
        });
        return after;
      });
      const [withUse] = await quotasWithUse(ctx.orm.em.fork(), { id: quota.id }, at);
      return create(ProviderManageResultSchema, { quota: withUse });
    },
  };
}

/** A quota as its audit entry shows it. */
const audited = (row: QuotaRow) => ({
  id: row.id,
  scope: row.scope,
  subject: row.subject,
  window: row.window,
  max_requests: row.maxRequests,
  max_tokens: row.maxTokens,
});
