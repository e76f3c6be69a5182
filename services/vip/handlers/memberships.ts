import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { SubscriptionView, type Entitlement } from "../../../gen/pf/billing/v1/billing_pb.js";
import {
  CheckMode,
  MemberSchema,
  MembershipPreferencesSchema,
  MembershipSchema,
  MembershipStatusResultSchema,
  MembersResultSchema,
  PaidVia,
  Source,
  type EntitlementCheckRequest,
} from "../../../gen/pf/vip/v1/memberships_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { principalOf, type Principal } from "../../kit/auth/principal.js";
import { decodeCursor, encodeCursor, page, pageLimit } from "../../kit/paging.js";
import { invalid, problem } from "../../kit/problem.js";
import { requireSubject, requireUser } from "../../kit/subjects.js";
import type { VipContext } from "../context.js";
import { EntitlementRow, MembershipRow } from "../db/entities.js";
import { versionsOf } from "../db/plans.js";
import { billingEntitlementOf, billingUnreachable, entitlementFor, readFacts, refreshFromBilling, relayBilling, resultOf, storeFact } from "../db/projection.js";
import { requireOwner, requireSelfOrGrant } from "../domain/access.js";
import { isStale } from "../domain/entitlements.js";

type MembershipHandlers = Pick<ServiceImpl<typeof VipService>, "getMemberships" | "listMembers" | "checkEntitlement" | "postEntitlementCheck">;

/** Memberships, members and entitlement checks: billing's facts through this service's projection. */
export function membershipHandlers(ctx: VipContext): MembershipHandlers {
  async function check(request: EntitlementCheckRequest, principal: Principal) {
    const subject = requireSubject("subject", request.subject);
    const creator = requireOwner("creator", request.creator);
    if (!(request.mode in CheckMode)) throw invalid("mode", "mode is CHECK_MODE_PROJECTION, CHECK_MODE_AUTO or CHECK_MODE_AUTHORITATIVE");
    requireSelfOrGrant(principal, [subject, creator], "the subject or the creator");
    return (await entitlementFor(ctx, subject, creator, request.mode)).result;
  }

  return {
    checkEntitlement: (request, call) => check(request, principalOf(call)),
    postEntitlementCheck: (request, call) => check(request, principalOf(call)),

    async getMemberships(request, call) {
      const subject = requireUser("subject", request.subject);
      requireSelfOrGrant(principalOf(call), [subject], "the subject");
      const em = ctx.orm.em.fork();
      const rows = await em.find(MembershipRow, { member: subject }, { orderBy: { id: "desc" } });
      const now = ctx.clock.now();
      let facts = await readFacts(em, { subject });
      let source = Source.PROJECTION;
      let billingUnavailable = false;
      // Auto mode, one billing call for all the subject's channels.
      if (rows.some((row) => isStale(facts.get(`${subject}:${row.creator}`), now, ctx.settings.projectionTtlMs))) {
        try {
          facts = await refreshFromBilling(ctx, subject, "");
          source = Source.BILLING;
        } catch (error) {
          if (!billingUnreachable(error)) relayBilling(error);
          billingUnavailable = true;
        }
      }
      // Per creator: the checkout billing's entitlement names, else the latest one.
      const chosen = new Map<string, MembershipRow>();
      for (const row of rows) {
        const fact = facts.get(`${subject}:${row.creator}`);
        const named = fact?.planId === row.planId && fact.planVersion === row.planVersion;
        const held = chosen.get(row.creator);
        if (!held || (named && !(fact?.planId === held.planId && fact.planVersion === held.planVersion))) chosen.set(row.creator, row);
      }
      const picked = [...chosen.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
      const versions = await versionsOf(em, picked.map((row) => ({ planId: row.planId, version: row.planVersion })));
      const memberships = picked.map((row) =>
        create(MembershipSchema, {
          id: row.id,
          member: row.member,
          creator: row.creator,
          planId: row.planId,
          planVersion: versions.get(`${row.planId}:${row.planVersion}`),
          preferences: create(MembershipPreferencesSchema, row.preferences),
          paidVia: row.paidVia === "intent" ? PaidVia.INTENT : PaidVia.CREDIT,
          intentId: row.intentId ?? "",
          subscriptionId: row.subscriptionId ?? facts.get(`${subject}:${row.creator}`)?.subscriptionId ?? "",
          entitlement: resultOf(subject, row.creator, facts.get(`${subject}:${row.creator}`), now, ctx.settings.graceMs, source, billingUnavailable),
          createdAt: timestampFromDate(row.createdAt),
        }),
      );
      return create(MembershipStatusResultSchema, { subject, memberships });
    },

    async listMembers(request, call) {
      const creator = requireOwner("ref", request.ref);
      requireSelfOrGrant(principalOf(call), [creator], "the creator");
      const limit = pageLimit(request.limit);
      const [from, position] = decodeCursor(request.cursor) ?? ["billing", ""];
      if ((from !== "billing" && from !== "projection") || typeof position !== "string") throw invalid("cursor", "cursor is not one this service issued");
      if (from === "billing") {
        try {
          const answer = await ctx.billing.listSubscriptions(
            { streamer: creator, view: SubscriptionView.ENTITLEMENTS, limit, cursor: position },
            { timeoutMs: ctx.settings.billingReadTimeoutMs },
          );
          const result = answer.answer.case === "entitlements" ? answer.answer.value : undefined;
          await project(result?.entitlements ?? [], result?.checkedAt ? timestampDate(result.checkedAt) : ctx.clock.now());
          return create(MembersResultSchema, {
            creator,
            source: Source.BILLING,
            asOf: result?.checkedAt,
            members: (result?.entitlements ?? []).map((e) =>
              create(MemberSchema, { subject: e.subject, planId: e.planId, planVersion: e.planVersion, subscriptionId: e.subscriptionId, validUntil: e.validUntil }),
            ),
            nextCursor: result?.nextCursor ? encodeCursor(["billing", result.nextCursor]) : "",
          });
        } catch (error) {
          if (!billingUnreachable(error)) relayBilling(error);
          // A page of billing's cannot be continued from the projection.
          if (position !== "") throw problem(503, "billing.unavailable", "Billing did not answer; this page continues billing's list: start again.");
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
        await storeFact(em, e.subject, e.streamer, { ...billingEntitlementOf(e), status: "active", observedAt: checkedAt, refreshedAt: checkedAt });
      }
    });
  }

  /** The members the projection holds entitled now, labelled with how current it is. */
  async function fromProjection(creator: string, limit: number, after: string) {
    const em = ctx.orm.em.fork();
    const now = ctx.clock.now();
    const rows = await em.find(
      EntitlementRow,
      { streamer: creator, status: { $ne: "ended" }, validUntil: { $gt: now }, ...(after ? { subject: { $gt: after } } : {}) },
      { orderBy: { subject: "asc" }, limit: limit + 1 },
    );
    const { items, nextCursor } = page(rows, limit, (row) => ["projection", row.subject]);
    const [latest] = await em.find(EntitlementRow, { streamer: creator }, { orderBy: { refreshedAt: "desc" }, limit: 1 });
    const asOf = latest?.refreshedAt ?? now;
    return create(MembersResultSchema, {
      creator,
      source: Source.PROJECTION,
      asOf: timestampFromDate(asOf),
      ageSeconds: BigInt(Math.max(0, Math.floor((now.getTime() - asOf.getTime()) / 1000))),
      members: items.map((row) =>
        create(MemberSchema, {
          subject: row.subject, planId: row.planId, planVersion: BigInt(row.planVersion), subscriptionId: row.subscriptionId,
          validUntil: row.validUntil ? timestampFromDate(row.validUntil) : undefined,
        }),
      ),
      nextCursor,
    });
  }
}
