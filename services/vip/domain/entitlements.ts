import { EntitlementStatus } from "../../../gen/pf/vip/v1/memberships_pb.js";

/** What the projection knows of one subscriber's entitlement to one channel. */
export interface Fact {
  subscriptionId: string;
  planId: string;
  planVersion: number;
  /** Billing's status; "none": billing answered no current entitlement. */
  status: "active" | "canceled" | "ended" | "none";
  /** The last known end of the paid period. */
  validUntil: Date | null;
  /** When billing's fact held (event time or answer time): an older fact never overwrites a newer one. */
  observedAt: Date;
  /** When this service learned it. */
  refreshedAt: Date;
}

export interface Answer {
  status: EntitlementStatus;
  member: boolean;
  validUntil?: Date;
  graceUntil?: Date;
}

/**
 * The entitlement answer: a member until valid_until; within the grace after
 * it still a member (in grace: a renewal may be on its way), unless billing
 * ended it; past valid_until plus grace unknown. With no fact while billing
 * did not answer, nothing is known: unknown too (billing may hold an
 * entitlement whose event has not arrived). Only member and in grace
 * authorize; unknown never does.
 */
export function answerOf(fact: Fact | undefined, now: Date, graceMs: number, billingUnavailable = false): Answer {
  if (!fact && billingUnavailable) return { status: EntitlementStatus.UNKNOWN, member: false };
  if (!fact?.validUntil) return { status: EntitlementStatus.NOT_MEMBER, member: false };
  const validUntil = fact.validUntil;
  const graceUntil = new Date(validUntil.getTime() + graceMs);
  const at = now.getTime();
  if (at >= graceUntil.getTime()) return { status: EntitlementStatus.UNKNOWN, member: false, validUntil, graceUntil };
  if (fact.status === "ended") return { status: EntitlementStatus.NOT_MEMBER, member: false, validUntil, graceUntil };
  if (at < validUntil.getTime()) return { status: EntitlementStatus.MEMBER, member: true, validUntil, graceUntil };
  return { status: EntitlementStatus.IN_GRACE, member: true, validUntil, graceUntil };
}

/** A projected fact older than the TTL is stale (mode auto then asks billing); no fact at all is stale too. */
export function isStale(fact: Fact | undefined, now: Date, ttlMs: number): boolean {
  return !fact || now.getTime() - fact.refreshedAt.getTime() > ttlMs;
}

/** A current entitlement as billing answered it. */
export interface BillingEntitlement {
  subscriptionId: string;
  planId: string;
  planVersion: number;
  validUntil: Date;
}

/**
 * Merges billing's direct answer into what the projection knew. No current
 * entitlement while the projection thought one ran: billing ended it early
 * (the event has not arrived yet). No current entitlement after valid_until:
 * the end stays known, so grace and unknown still apply.
 */
export function factFromBilling(
  previous: Fact | undefined,
  current: BillingEntitlement | undefined,
  checkedAt: Date,
): Fact {
  const at = { observedAt: checkedAt, refreshedAt: checkedAt };
  if (current) return { ...current, status: "active", ...at };
  if (!previous) return { subscriptionId: "", planId: "", planVersion: 0, status: "none", validUntil: null, ...at };
  if (previous.validUntil && previous.validUntil > checkedAt)
    return { ...previous, status: "ended", validUntil: checkedAt, ...at };
  return { ...previous, status: previous.status === "ended" ? "ended" : "none", ...at };
}
