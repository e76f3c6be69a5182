import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import {
  SubscriptionStatus,
  type Entitlement,
  type EntitlementResult,
  type Subscription,
} from "../../../gen/pf/billing/v1/subscriptions_pb.js";
import {
  CheckMode,
  EntitlementCheckResultSchema,
  EntitlementStatus,
  Source,
  type EntitlementCheckResult,
} from "../../../gen/pf/vip/v1/memberships_pb.js";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { VipContext } from "../context.js";
import { notAnswered } from "../../kit/runtime/call.js";
import { relayBilling } from "../domain/billing.js";
import { answerOf, factFromBilling, isStale, type BillingEntitlement, type Fact } from "../domain/entitlements.js";
import { EntitlementRow } from "./entities.js";

const factOf = (row: EntitlementRow): Fact => ({
  subscriptionId: row.subscriptionId,
  planId: row.planId,
  planVersion: row.planVersion,
  status: row.status as Fact["status"],
  validUntil: row.validUntil ?? null,
  observedAt: row.observedAt,
  refreshedAt: row.refreshedAt,
});

export async function readFacts(
  em: EntityManager,
  where: { subject?: string; streamer?: string },
): Promise<Map<string, Fact>> {
  const rows = await em.find(EntitlementRow, where);
  return new Map(rows.map((row) => [`${row.subject}:${row.streamer}`, factOf(row)]));
}

type FactText = Omit<Fact, "validUntil" | "observedAt" | "refreshedAt"> & {
  validUntil: string | null;
  observedAt: string;
  refreshedAt: string;
};

const factOfChannel = new HotRead<FactText, [string, string]>(
  "entitlements.by_key",
  `select subscription_id as "subscriptionId", plan_id as "planId", plan_version as "planVersion", status,
     valid_until as "validUntil", observed_at as "observedAt", refreshed_at as "refreshedAt"
   from {entitlements} where subject = $1 and streamer = $2`,
);

const factsOfSubject = new HotRead<FactText & { streamer: string }, [string]>(
  "entitlements.by_subject",
  `select streamer, subscription_id as "subscriptionId", plan_id as "planId", plan_version as "planVersion", status,
     valid_until as "validUntil", observed_at as "observedAt", refreshed_at as "refreshedAt"
   from {entitlements} where subject = $1`,
);

const factOfText = ({ subscriptionId, planId, planVersion, status, ...row }: FactText): Fact => ({
  subscriptionId,
  planId,
  planVersion,
  status,
  validUntil: row.validUntil === null ? null : new Date(row.validUntil),
  observedAt: new Date(row.observedAt),
  refreshedAt: new Date(row.refreshedAt),
});

/** The projection's fact of `subject` on `streamer`'s channel, read outside any transaction (a hot read: every check). */
export async function readFact(ctx: ReadContext, subject: string, streamer: string): Promise<Fact | undefined> {
  const [row] = await factOfChannel.run(ctx, subject, streamer);
  return row && factOfText(row);
}

/** `readFacts` of one subject as a hot read, keyed `subject:streamer`. */
export async function readFactsOf(ctx: ReadContext, subject: string): Promise<Map<string, Fact>> {
  const rows = await factsOfSubject.run(ctx, subject);
  return new Map(rows.map((row) => [`${subject}:${row.streamer}`, factOfText(row)]));
}

/** The subjects the projection holds entitled to a creator at `now`, by subject after the cursor's (the members list). */
export function entitledPage(
  em: EntityManager,
  streamer: string,
  now: Date,
  after: string,
  limit: number,
): Promise<EntitlementRow[]> {
  return em.find(
    EntitlementRow,
    {
      streamer,
      status: { $ne: "ended" },
      validUntil: { $gt: now },
      ...(after ? { subject: { $gt: after } } : {}),
    },
    { orderBy: { subject: "asc" }, limit: limit + 1 },
  );
}

/** When the projection last refreshed any fact of a creator; undefined when it holds none. */
export async function lastRefreshOf(em: EntityManager, streamer: string): Promise<Date | undefined> {
  const [latest] = await em.find(EntitlementRow, { streamer }, { orderBy: { refreshedAt: "desc" }, limit: 1 });
  return latest?.refreshedAt;
}

/** Writes a fact unless the projection already holds a newer one (events and direct checks may arrive in any order). */
export async function storeFact(em: EntityManager, subject: string, streamer: string, fact: Fact): Promise<void> {
  await sql(
    em,
    `insert into {entitlements} as e (subject, streamer, subscription_id, plan_id, plan_version, status, valid_until, observed_at, refreshed_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (subject, streamer) do update set subscription_id = excluded.subscription_id, plan_id = excluded.plan_id,
       plan_version = excluded.plan_version, status = excluded.status, valid_until = excluded.valid_until,
       observed_at = excluded.observed_at, refreshed_at = excluded.refreshed_at
     where e.observed_at <= excluded.observed_at`,
    [
      subject,
      streamer,
      fact.subscriptionId,
      fact.planId,
      fact.planVersion,
      fact.status,
      fact.validUntil,
      fact.observedAt,
      fact.refreshedAt,
    ],
  );
}

const STATUS: Partial<Record<SubscriptionStatus, Fact["status"]>> = {
  [SubscriptionStatus.ACTIVE]: "active",
  [SubscriptionStatus.CANCELED]: "canceled",
  [SubscriptionStatus.ENDED]: "ended",
};

/** The fact a billing subscription states (from billing.entitlement.changed, or a subscription billing answered). */
export function factOfSubscription(subscription: Subscription, observedAt: Date, refreshedAt: Date): Fact {
  return {
    subscriptionId: subscription.id,
    planId: subscription.planId,
    planVersion: Number(subscription.planVersion),
    status: STATUS[subscription.status] ?? "none",
    validUntil: subscription.validUntil ? timestampDate(subscription.validUntil) : null,
    observedAt,
    refreshedAt,
  };
}

export const billingEntitlementOf = (e: Entitlement): BillingEntitlement => ({
  subscriptionId: e.subscriptionId,
  planId: e.planId,
  planVersion: Number(e.planVersion),
  validUntil: e.validUntil ? timestampDate(e.validUntil) : new Date(0),
});

/**
 * Asks billing for a subject's current entitlements (one channel or all) and
 * merges the answer into the projection, in a short transaction after the
 * call. Undefined when billing does not answer; its refusals are relayed.
 */
export async function refreshFromBilling(
  ctx: VipContext,
  subject: string,
  streamer: string,
): Promise<Map<string, Fact> | undefined> {
  let answer: EntitlementResult;
  try {
    answer = await ctx.billing.getEntitlements({ subject, streamer }, { timeoutMs: ctx.settings.billingReadTimeoutMs });
  } catch (error) {
    if (notAnswered(error)) return undefined;
    relayBilling(error);
  }
  const checkedAt = answer.checkedAt ? timestampDate(answer.checkedAt) : ctx.clock.now();
  return ctx.transaction(async (em) => {
    const rows = await em.find(
      EntitlementRow,
      { subject, ...(streamer ? { streamer } : {}) },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const known = new Map(rows.map((row) => [row.streamer, factOf(row)]));
    const current = new Map(answer.entitlements.map((e) => [e.streamer, billingEntitlementOf(e)]));
    const streamers = new Set([...known.keys(), ...current.keys(), ...(streamer ? [streamer] : [])]);
    const facts = new Map<string, Fact>();
    for (const each of streamers) {
      const fact = factFromBilling(known.get(each), current.get(each), checkedAt);
      await storeFact(em, subject, each, fact);
      facts.set(`${subject}:${each}`, fact);
    }
    return facts;
  });
}

/**
 * The entitlement answer of `subject` to `creator`'s channel: from the
 * projection, asking billing first in mode authoritative, or in mode auto
 * when the projection is stale. Billing unreachable: auto answers from the
 * projection; authoritative answers unknown (never authorizes).
 */
export async function entitlementFor(
  ctx: VipContext,
  subject: string,
  creator: string,
  mode: CheckMode,
): Promise<{ result: EntitlementCheckResult; fact?: Fact }> {
  const now = ctx.clock.now();
  const key = `${subject}:${creator}`;
  let fact = subject.startsWith("usr_") ? await readFact(ctx, subject, creator) : undefined;
  const ask =
    subject.startsWith("usr_") &&
    (mode === CheckMode.AUTHORITATIVE ||
      (mode !== CheckMode.PROJECTION && isStale(fact, now, ctx.settings.projectionTtlMs)));
  let source = Source.PROJECTION;
  let billingUnavailable = false;
  if (ask) {
    const facts = await refreshFromBilling(ctx, subject, creator);
    if (facts) {
      fact = facts.get(key);
      source = Source.BILLING;
    } else {
      billingUnavailable = true;
      if (mode === CheckMode.AUTHORITATIVE) {
        const result = create(EntitlementCheckResultSchema, {
          subject,
          creator,
          member: false,
          status: EntitlementStatus.UNKNOWN,
          billingUnavailable,
        });
        return { result };
      }
    }
  }
  return { result: resultOf(subject, creator, fact, now, ctx.settings.graceMs, source, billingUnavailable), fact };
}

export function resultOf(
  subject: string,
  creator: string,
  fact: Fact | undefined,
  now: Date,
  graceMs: number,
  source: Source,
  billingUnavailable = false,
) {
  const answer = answerOf(fact, now, graceMs, billingUnavailable);
  return create(EntitlementCheckResultSchema, {
    subject,
    creator,
    member: answer.member,
    status: answer.status,
    validUntil: answer.validUntil ? timestampFromDate(answer.validUntil) : undefined,
    graceUntil: answer.graceUntil ? timestampFromDate(answer.graceUntil) : undefined,
    planId: fact?.planId ?? "",
    planVersion: BigInt(fact?.planVersion ?? 0),
    source,
    checkedAt: fact ? timestampFromDate(fact.refreshedAt) : undefined,
    billingUnavailable,
  });
}
