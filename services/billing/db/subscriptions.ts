import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type FilterQuery } from "@mikro-orm/postgresql";
import {
  EntitlementSchema,
  PaidVia,
  SubscriptionSchema,
  SubscriptionStatus,
  type Entitlement,
  type Subscription,
} from "../../../gen/pf/billing/v1/subscriptions_pb.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { newId } from "../../kit/handler/ids.js";
import { money } from "../domain/money.js";
import { entitlementChanged } from "../events.js";
import { SubscriptionRow } from "./entities.js";

/** Current: not ended and paid past `now` (a lapsed one the sweep has not ended yet entitles nothing). */
const current = (now: Date) => ({ status: { $ne: "ended" }, validUntil: { $gt: now } });

/** A subject's current subscriptions (to one channel, when given), newest first: their entitlements. */
export function entitlementsOf(
  em: EntityManager,
  subject: string,
  streamer: string | undefined,
  now: Date,
): Promise<SubscriptionRow[]> {
  return em.find(
    SubscriptionRow,
    { subject, ...(streamer ? { streamer } : {}), ...current(now) },
    { orderBy: { id: "desc" } },
  );
}

/** Which subscriptions a read lists: of a subject, of a channel; current ones only, or ended ones too. */
export interface SubscriptionFilter {
  subject?: string;
  streamer?: string;
  currentAt?: Date;
  includeEnded: boolean;
}

/** Up to `rows` subscriptions matching the filter, newest first, before the cursor's id. */
export function subscriptionsPage(
  em: EntityManager,
  filter: SubscriptionFilter,
  before: string | undefined,
  rows: number,
): Promise<SubscriptionRow[]> {
  const where: FilterQuery<SubscriptionRow> = {
    ...(filter.subject ? { subject: filter.subject } : {}),
    ...(filter.streamer ? { streamer: filter.streamer } : {}),
    ...(before !== undefined ? { id: { $lt: before } } : {}),
    ...(filter.currentAt ? current(filter.currentAt) : filter.includeEnded ? {} : { status: { $ne: "ended" } }),
  };
  return em.find(SubscriptionRow, where, { orderBy: { id: "desc" }, limit: rows });
}

/** A subscription locked for a change, inside the caller's transaction; null when there is none. */
export function lockSubscription(em: EntityManager, id: string): Promise<SubscriptionRow | null> {
  return em.findOne(SubscriptionRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/**
 * The next subscription due (not ended, its period over), locked, skipping
 * rows another sweep holds (FOR UPDATE SKIP LOCKED) and those in `skip`.
 */
export function nextDueSubscription(em: EntityManager, at: Date, skip: string[]): Promise<SubscriptionRow | null> {
  return em.findOne(
    SubscriptionRow,
    { status: { $ne: "ended" }, validUntil: { $lte: at }, ...(skip.length ? { id: { $nin: skip } } : {}) },
    { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { validUntil: "asc", id: "asc" } },
  );
}

/** Writes changes to a locked subscription (cancelled, ended, renewed). */
export async function changeSubscription(
  em: EntityManager,
  row: SubscriptionRow,
  changes: Partial<SubscriptionRow>,
): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** One paid period of a channel subscription, bought from credit or through an intent. */
export interface PaidPeriod {
  subject: string;
  streamer: string;
  planId: string;
  planVersion: bigint;
  tier: string;
  currency: string;
  price: bigint;
  paidVia: "credit" | "intent";
  periodMs: number;
  at: Date;
}

/**
 * Starts a subscription, or adds the paid period to the subscriber's current
 * one for that channel (from its end time, or from now when it already lapsed),
 * under the plan version just bought. Publishes billing.entitlement.changed.
 * The caller posts the payment in the same transaction.
 */
export async function addPaidPeriod(em: EntityManager, period: PaidPeriod): Promise<SubscriptionRow> {
  // A row lock cannot guard a subscription not created yet: two first purchases for one channel queue here instead.
  await advisoryLock(em, `billing.subscription:${period.subject}:${period.streamer}`);
  const current = await em.findOne(
    SubscriptionRow,
    { subject: period.subject, streamer: period.streamer, status: { $ne: "ended" } },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  let row: SubscriptionRow;
  if (current) {
    const from = Math.max(current.validUntil.getTime(), period.at.getTime());
    Object.assign(current, {
      planId: period.planId,
      planVersion: period.planVersion,
      tier: period.tier,
      currency: period.currency,
      price: period.price,
      paidVia: period.paidVia,
      status: "active",
      validUntil: new Date(from + period.periodMs),
      periods: current.periods + 1,
      updatedAt: period.at,
    });
    row = current;
  } else {
    row = em.create(SubscriptionRow, {
      id: newId("sub"),
      subject: period.subject,
      streamer: period.streamer,
      planId: period.planId,
      planVersion: period.planVersion,
      tier: period.tier,
      currency: period.currency,
      price: period.price,
      status: "active",
      paidVia: period.paidVia,
      validUntil: new Date(period.at.getTime() + period.periodMs),
      startedAt: period.at,
      endedAt: null,
      periods: 1,
      updatedAt: period.at,
    });
  }
  await em.flush();
  await entitlementChanged(em, subscriptionToProto(row), current ? "renewed" : "started", period.at);
  return row;
}

const STATUS: Record<string, SubscriptionStatus> = {
  active: SubscriptionStatus.ACTIVE,
  canceled: SubscriptionStatus.CANCELED,
  ended: SubscriptionStatus.ENDED,
};

export function subscriptionToProto(row: SubscriptionRow): Subscription {
  return create(SubscriptionSchema, {
    id: row.id,
    subject: row.subject,
    streamer: row.streamer,
    planId: row.planId,
    planVersion: BigInt(row.planVersion),
    tier: row.tier,
    price: money(BigInt(row.price), row.currency),
    status: STATUS[row.status],
    paidVia: row.paidVia === "credit" ? PaidVia.CREDIT : PaidVia.INTENT,
    validUntil: timestampFromDate(row.validUntil),
    startedAt: timestampFromDate(row.startedAt),
    endedAt: row.endedAt ? timestampFromDate(row.endedAt) : undefined,
    periods: row.periods,
  });
}

/** The entitlement a current subscription gives. */
export function entitlementToProto(row: SubscriptionRow): Entitlement {
  return create(EntitlementSchema, {
    subject: row.subject,
    streamer: row.streamer,
    subscriptionId: row.id,
    planId: row.planId,
    planVersion: BigInt(row.planVersion),
    validUntil: timestampFromDate(row.validUntil),
  });
}
