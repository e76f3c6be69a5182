import { notAnswered } from "../../kit/rpc/call.js";
import { problem } from "../../kit/handler/problem.js";

/** A billing failure as this service answers it: billing's problems as billing stated them, no answer (the kit's notAnswered) as 503. */
export function relayBilling(error: unknown): never {
  if (notAnswered(error)) throw problem(503, "billing.unavailable", "Billing did not answer; try again later.");
  throw error;
}
