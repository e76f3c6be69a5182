import { problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import { NETWORK } from "./ledger.js";

/** A channel: a streamer (usr_…), or the network's own (its plans are paid to the platform's revenue); 400 naming the field. */
export function requireChannel(field: string, value: string): string {
  return value === NETWORK ? NETWORK : requireUser(field, value);
}

/** A subscription as stored: status active (renews), canceled (runs out) or ended (final); paid via credit or intent. */
export interface SubscriptionState {
  status: string;
  paidVia: string;
}

/**
 * A cancellation: `immediately` ends it now (no refund); otherwise renewal
 * stops and it runs to valid_until ("unchanged" when already canceled). An
 * ended subscription is refused (409 subscription.ended).
 */
export function cancellation(subscription: SubscriptionState, immediately: boolean): "end" | "cancel" | "unchanged" {
  if (subscription.status === "ended") throw problem(409, "subscription.ended", "The subscription has already ended.");
  if (immediately) return "end";
  return subscription.status === "canceled" ? "unchanged" : "cancel";
}

/**
 * What the sweep does with a subscription whose period is over: an active one
 * paid from credit renews (if the credit covers it; else it ends); a canceled
 * one, or one paid through an intent (bought again only by a new intent), ends.
 */
export function dueOutcome(subscription: SubscriptionState): "renew" | "end" {
  return subscription.status === "active" && subscription.paidVia === "credit" ? "renew" : "end";
}

/** The next period starts where the last ended, so paid time has no gaps and no overlaps. */
export function nextValidUntil(validUntil: Date, periodMs: number): Date {
  return new Date(validUntil.getTime() + periodMs);
}
