import { toJson } from "@bufbuild/protobuf";
import { TimestampSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { problem } from "../../kit/handler/problem.js";

/** Cashout states as stored: requested (in escrow) until a manager approves or denies it. */
export type CashoutStatus = "requested" | "approved" | "denied";

/** A cashout takes at least the configured minimum (422 cashout.below_minimum, naming it). */
export function requireMinimum(amount: bigint, currency: string, minimum: bigint): void {
  if (amount < minimum) {
    throw problem(422, "cashout.below_minimum", `A cashout takes at least ${minimum} minor units.`, {
      minimum: minimum.toString(),
      currency,
    });
  }
}

/** The time from which a cashout requested at `at` may be approved. */
export function escrowUntil(at: Date, escrowMs: number): Date {
  return new Date(at.getTime() + escrowMs);
}

/** What the manager asks: approve with the provider's payout reference, or deny with a reason. */
export type Decision = { action: "approve"; payoutReference: string } | { action: "deny"; reason: string };

/** The cashout as far as deciding it goes. */
export interface Decidable {
  status: string;
  escrowUntil: Date;
  payoutReference: string;
  reason: string;
}

/**
 * Whether a decision applies ("apply") or repeats one already made
 * ("repeat": the same approval reference or denial reason, answered as it
 * is, so a manager's retry is harmless). A requested cashout is approved only
 * once its escrow has passed; a decided one is never decided again.
 */
export function decide(cashout: Decidable, decision: Decision, now: Date): "apply" | "repeat" {
  if (cashout.status === "requested") {
    if (decision.action === "approve" && now < cashout.escrowUntil) {
      throw problem(409, "cashout.in_escrow", "The cashout is in escrow: it may be approved from escrow_until on.", {
        escrow_until: toJson(TimestampSchema, timestampFromDate(cashout.escrowUntil)),
      });
    }
    return "apply";
  }
  const same =
    decision.action === "approve"
      ? cashout.status === "approved" && cashout.payoutReference === decision.payoutReference
      : cashout.status === "denied" && cashout.reason === decision.reason;
  if (same) return "repeat";
  throw problem(409, "cashout.decided", `The cashout was already ${cashout.status}.`, {
    cashout_status: cashout.status,
  });
}
