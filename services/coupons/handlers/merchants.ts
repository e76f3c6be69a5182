import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  MerchantManageResultSchema,
  MerchantStatus,
  type CouponsService,
  type MerchantManageRequest,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { staffActor } from "../../kit/auth/principal.js";
import { isPublicSuffix } from "../../kit/handler/public-suffix.js";
import { maxLength } from "../../kit/handler/text.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { couponToProto, reportsOf } from "../db/coupons.js";
import { addRules, removeRule } from "../db/domain-rules.js";
import type { MerchantRow } from "../db/entities.js";
import {
  changeMerchantStatus,
  lockMerchant,
  MERCHANT_STATUS_FROM_PROTO,
  MERCHANT_STATUS_TO_PROTO,
  merchantAnswer,
  newMerchant,
} from "../db/merchants.js";
import { couponDocuments, merchantCodeIds } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import { normalizeHost } from "../domain/hosts.js";
import { normalizeRule, ruleKey, type DomainRule } from "../domain/rules.js";
import { merchantTransition, type MerchantStatus as Status } from "../domain/transitions.js";
import { codePublished, merchantChanged, subjects } from "../events.js";

type MerchantHandlers = Pick<
  ServiceImpl<typeof CouponsService>,
  "createMerchant" | "updateMerchantDomains" | "updateMerchantStatus"
>;

/** Rules of a request, normalized, each once. */
function rulesOf(field: "domains" | "remove_domains", rules: DomainRule[]): DomainRule[] {
  const normalized = rules.map((rule, i) => normalizeRule(`${field}[${i}]`, rule));
  const seen = new Set<string>();
  normalized.forEach((rule, i) => {
    if (seen.has(ruleKey(rule))) throw invalid(`${field}[${i}]`, `${field}[${i}] repeats the rule ${ruleKey(rule)}.`);
    seen.add(ruleKey(rule));
  });
  return normalized;
}

/**
 * Merchants: created by managers (or from submissions, pending), their domain
 * rules, approval and disabling. Every route here is for staff (ACTOR_STAFF).
 */
export function merchantHandlers(ctx: ServiceContext): MerchantHandlers {
  const answer = async (em: EntityManager, merchant: MerchantRow, publishedCoupons = 0) =>
    create(MerchantManageResultSchema, { merchant: await merchantAnswer(em, merchant), publishedCoupons });

  return {
    async createMerchant(request, call) {
      const by = staffActor(call);
      const host = normalizeHost(request.host);
      if (host === undefined)
        throw invalid("host", "host is required: the merchant's main hostname, such as shop.example.com.");
      if (isPublicSuffix(host))
        throw problem(400, "coupons.domain.public_suffix", `${host} is a public suffix, not a merchant's site.`, {
          field: "host",
        });
      const status = createStatus(request);
      const name = maxLength("name", request.name.trim(), 200) || host;
      const rules = rulesOf("domains", request.domains);
      // The main host covers its subdomains unless a rule for it says otherwise.
      if (!rules.some((rule) => rule.domain === host && rule.pathPrefix === ""))
        rules.unshift({ domain: host, includeSubdomains: true, pathPrefix: "" });
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const merchant = newMerchant(em, {
          name,
          host,
          status,
          createdBy: by,
          createdAt: at,
          updatedAt: at,
        });
        await addRules(em, merchant.id, rules, at);
        const answered = await answer(em, merchant);
        await merchantChanged(em, subjects.merchantCreated, answered.merchant!, { changedBy: by }, at);
        return answered;
      });
    },

    async updateMerchantDomains(request, call) {
      const by = staffActor(call);
      const adding = rulesOf("domains", request.domains);
      const removing = rulesOf("remove_domains", request.removeDomains);
      if (adding.length + removing.length === 0)
        throw invalid("domains", "Name rules to add (domains) or to remove (remove_domains).");
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const merchant = await lockMerchant(em, request.id);
        for (const [i, rule] of removing.entries()) {
          if (!(await removeRule(em, merchant.id, rule)))
            throw problem(404, "coupons.domain.not_found", `This merchant has no rule ${ruleKey(rule)}.`, {
              field: `remove_domains[${i}]`,
            });
        }
        await addRules(em, merchant.id, adding, at);
        merchant.updatedAt = at;
        const answered = await answer(em, merchant);
        await merchantChanged(em, subjects.merchantDomainsChanged, answered.merchant!, { changedBy: by }, at);
        return answered;
      });
    },

    async updateMerchantStatus(request, call) {
      const by = staffActor(call);
      const to = MERCHANT_STATUS_FROM_PROTO[request.status];
      if (to !== "approved" && to !== "disabled")
        throw invalid("status", "status is MERCHANT_STATUS_APPROVED or MERCHANT_STATUS_DISABLED.");
      const reason = maxLength("reason", request.reason.trim(), 500);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const merchant = await lockMerchant(em, request.id);
        const from = merchant.status as Status;
        if (merchantTransition(from, to) === "same") return answer(em, merchant);
        // Approval publishes the codes people submitted (and staff reviewed) while the merchant waited.
        const waiting = await changeMerchantStatus(em, merchant, to, at);
        const reports = await reportsOf(
          em,
          waiting.map((row) => row.id),
        );
        // Only codes that enter active results are announced: not one staff disabled or expired, nor one past its end.
        const entering = waiting.filter((row) => row.moderation === "" && (!row.expiresAt || row.expiresAt > at));
        for (const row of entering) await codePublished(em, couponToProto(row, reports.get(row.id), at), at);
        // Search holds the codes of approved merchants only: a disabled merchant's codes are tombstoned.
        await refreshSearchDocuments(em, couponDocuments, await merchantCodeIds(em, merchant.id), at);
        const answered = await answer(em, merchant, waiting.length);
        await merchantChanged(
          em,
          subjects.merchantStatusChanged,
          answered.merchant!,
          { previous: MERCHANT_STATUS_TO_PROTO[from], reason, changedBy: by },
          at,
        );
        return answered;
      });
    },
  };
}

/** A new merchant is pending unless its manager approves it at once. */
function createStatus(request: MerchantManageRequest): Status {
  if (request.status === MerchantStatus.UNSPECIFIED || request.status === MerchantStatus.PENDING) return "pending";
  if (request.status === MerchantStatus.APPROVED) return "approved";
  throw invalid("status", "A new merchant is MERCHANT_STATUS_PENDING (default) or MERCHANT_STATUS_APPROVED.");
}
