import { relayFailure } from "../../kit/rpc/relay-failure.js";

/** A billing failure as this service answers it: billing's problems as billing stated them, no answer as 503 billing.unavailable. */
export function relayBilling(error: unknown): never {
  relayFailure("billing", error);
}
