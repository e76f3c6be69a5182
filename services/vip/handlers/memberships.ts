import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  MembershipOrigin,
  MembershipPreferencesSchema,
  MembershipSchema,
  MembershipStatusResultSchema,
  PaidVia,
  Source,
} from "../../../gen/pf/vip/v1/memberships_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { VipContext } from "../context.js";
import { readMemberships } from "../db/memberships.js";
import { hotPlanRows } from "../db/plan-reads.js";
import { versionViews } from "../db/plans.js";
import { readFactsOf, refreshFromBilling, resultOf } from "../db/projection.js";
import { requireSelfOrGrant } from "../domain/access.js";
import type { Fact } from "../domain/entitlements.js";
import { membershipsOf } from "../domain/memberships.js";
import { ageSeconds } from "./members.js";

type MembershipHandlers = Pick<ServiceImpl<typeof VipService>, "getMemberships">;

/**
 * A subject's memberships: the checkouts made here joined with the channel subscriptions billing holds.
 * Its reads are hot reads; only billing's answer is written (refreshFromBilling's own transaction).
 */
export function membershipHandlers(ctx: VipContext): MembershipHandlers {
  return {
    async getMemberships(request, call) {
      const subject = requireUser("subject", request.subject);
      requireSelfOrGrant(callerOf(call), [subject], "the subject");
      const rows = await readMemberships(ctx, subject);
      // Billing is always asked (one call for every channel): the projection cannot tell which subscriptions it never heard of.
      const asked = await refreshFromBilling(ctx, subject, "");
      const facts = asked ?? (await readFactsOf(ctx, subject));
      const now = ctx.clock.now();
      const source = asked ? Source.BILLING : Source.PROJECTION;
      const byCreator = new Map<string, Fact>([...facts].map(([key, fact]) => [key.slice(subject.length + 1), fact]));
      // Billing's answer time, or when the projection last learned of this subject.
      const asOf =
        [...facts.values()].reduce<Date | undefined>(
          (latest, fact) => (latest && latest > fact.refreshedAt ? latest : fact.refreshedAt),
          undefined,
        ) ?? now;
      const chosen = membershipsOf(rows, byCreator, now, ctx.settings.graceMs);

      const joined = chosen.map((c) =>
        c.origin === "checkout"
          ? { planId: c.checkout.planId, version: c.checkout.planVersion }
          : { planId: c.fact.planId, version: c.fact.planVersion },
      );
      const plans = hotPlanRows(ctx);
      const versions = await versionViews(plans, joined);
      // Billing takes any plan id: its plan is joined only when it is this channel's.
      const billingPlans = chosen.flatMap((c) => (c.origin === "billing" ? [c.fact.planId] : []));
      const owners = new Map(
        billingPlans.length === 0 ? [] : (await plans.plans(billingPlans)).map((plan) => [plan.id, plan.owner]),
      );

      const memberships = chosen.map((c, index) => {
        const entitlement = resultOf(subject, c.creator, c.fact, now, ctx.settings.graceMs, source, !asked);
        const planVersion = versions.get(`${joined[index].planId}:${joined[index].version}`);
        if (c.origin === "billing") {
          return create(MembershipSchema, {
            member: subject,
            creator: c.creator,
            planId: c.fact.planId,
            planVersion: owners.get(c.fact.planId) === c.creator ? planVersion : undefined,
            preferences: create(MembershipPreferencesSchema, c.preferences),
            subscriptionId: c.fact.subscriptionId,
            entitlement,
            origin: MembershipOrigin.BILLING,
          });
        }
        const row = c.checkout;
        return create(MembershipSchema, {
          id: row.id,
          member: row.member,
          creator: row.creator,
          planId: row.planId,
          planVersion,
          preferences: create(MembershipPreferencesSchema, row.preferences),
          paidVia: row.paidVia === "intent" ? PaidVia.INTENT : PaidVia.CREDIT,
          intentId: row.intentId ?? "",
          subscriptionId: row.subscriptionId ?? c.fact?.subscriptionId ?? "",
          entitlement,
          createdAt: timestampFromDate(row.createdAt),
          origin: MembershipOrigin.CHECKOUT,
        });
      });
      return create(MembershipStatusResultSchema, {
        subject,
        memberships,
        source,
        asOf: timestampFromDate(asOf),
        ageSeconds: asked ? 0n : ageSeconds(now, asOf),
        billingUnavailable: !asked,
      });
    },
  };
}
