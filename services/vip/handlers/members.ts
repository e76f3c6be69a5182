import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  SubscriptionView,
  type Entitlement,
  type SubscriptionsAnswer,
} from "../../../gen/pf/billing/v1/subscriptions_pb.js";
import { MemberSchema, MembersResultSchema, Source } from "../../../gen/pf/vip/v1/memberships_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { decodeCursor, encodeCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { VipContext } from "../context.js";
import { billingEntitlementOf, entitledPage, lastRefreshOf, storeFact } from "../db/projection.js";
import { requireOwner, requireSelfOrGrant } from "../domain/access.js";
import { notAnswered } from "../../kit/runtime/call.js";
import { relayBilling } from "../domain/billing.js";

type MemberHandlers = Pick<ServiceImpl<typeof VipService>, "listMembers">;

/** How old a projected answer is, in whole seconds. */
export const ageSeconds = (now: Date, asOf: Date) =>
  BigInt(Math.max(0, Math.floor((now.getTime() - asOf.getTime()) / 1000)));

/** A creator's members: billing's subscriptions, or the projection (labelled as such) when billing does not answer. */
export function memberHandlers(ctx: VipContext): MemberHandlers {
  return {
    async listMembers(request, call) {
      const creator = requireOwner("ref", request.ref);
      requireSelfOrGrant(callerOf(call), [creator], "the creator");
      const limit = pageLimit(request.limit);
      const [from, position] = decodeCursor(request.cursor) ?? ["billing", ""];
      if ((from !== "billing" && from !== "projection") || typeof position !== "string")
        throw invalid("cursor", "cursor is not one this service issued");
      if (from === "billing") {
        let answer: SubscriptionsAnswer | undefined;
        try {
          answer = await ctx.billing.listSubscriptions(
            { streamer: creator, view: SubscriptionView.ENTITLEMENTS, limit, cursor: position },
            { timeoutMs: ctx.settings.billingReadTimeoutMs },
          );
        } catch (error) {
          if (!notAnswered(error)) relayBilling(error);
          // A page of billing's cannot be continued from the projection.
          if (position !== "")
            throw problem(
              503,
              "billing.unavailable",
              "Billing did not answer; this page continues billing's list: start again.",
            );
        }
        if (answer) {
          const result = answer.answer.case === "entitlements" ? answer.answer.value : undefined;
          await project(
            result?.entitlements ?? [],
            result?.checkedAt ? timestampDate(result.checkedAt) : ctx.clock.now(),
          );
          return create(MembersResultSchema, {
            creator,
            source: Source.BILLING,
            asOf: result?.checkedAt,
            members: (result?.entitlements ?? []).map((e) =>
              create(MemberSchema, {
                subject: e.subject,
                planId: e.planId,
                planVersion: e.planVersion,
                subscriptionId: e.subscriptionId,
                validUntil: e.validUntil,
              }),
            ),
            nextCursor: result?.nextCursor ? encodeCursor(["billing", result.nextCursor]) : "",
          });
        }
      }
      return fromProjection(creator, limit, position);
    },
  };

  /** Billing's list keeps the projection fresh for the day billing does not answer. */
  async function project(entitlements: Entitlement[], checkedAt: Date) {
    if (entitlements.length === 0) return;
    await ctx.transaction(async (em) => {
      for (const e of entitlements) {
        await storeFact(em, e.subject, e.streamer, {
          ...billingEntitlementOf(e),
          status: "active",
          observedAt: checkedAt,
          refreshedAt: checkedAt,
        });
      }
    });
  }

  /** The members the projection holds entitled now, labelled with how current it is. */
  async function fromProjection(creator: string, limit: number, after: string) {
    const em = ctx.orm.em.fork();
    const now = ctx.clock.now();
    const rows = await entitledPage(em, creator, now, after, limit);
    const { items, nextCursor } = page(rows, limit, (row) => ["projection", row.subject]);
    const asOf = (await lastRefreshOf(em, creator)) ?? now;
    return create(MembersResultSchema, {
      creator,
      source: Source.PROJECTION,
      asOf: timestampFromDate(asOf),
      ageSeconds: ageSeconds(now, asOf),
      members: items.map((row) =>
        create(MemberSchema, {
          subject: row.subject,
          planId: row.planId,
          planVersion: BigInt(row.planVersion),
          subscriptionId: row.subscriptionId,
          validUntil: row.validUntil ? timestampFromDate(row.validUntil) : undefined,
        }),
      ),
      nextCursor,
    });
  }
}
