import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
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
