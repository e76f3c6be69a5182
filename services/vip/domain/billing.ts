import { Code, ConnectError } from "@connectrpc/connect";
import { problem, problemOf } from "../../kit/problem.js";

/**
 * Billing did not answer: no answer reached this service (unreachable, past
 * the deadline, the call cancelled) or billing failed with a 5xx of any kind
 * (500, 503, a 504 deadline of its own). Billing's refusals (4xx) are answers
 * and are relayed. Only errors of the call itself count: anything else is a
 * failure of this service.
 */
export function billingUnreachable(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  return error.code === Code.Canceled || problemOf(error).status >= 500;
}

/** A billing failure as this service answers it: billing's problems as billing stated them, not answering as 503. */
export function relayBilling(error: unknown): never {
  if (billingUnreachable(error)) throw problem(503, "billing.unavailable", "Billing did not answer; try again later.");
  throw error;
}
