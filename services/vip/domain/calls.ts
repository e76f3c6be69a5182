import { problem } from "../../kit/handler/problem.js";
import { notAnswered } from "../../kit/rpc/call.js";

/**
 * A failed call to another service as this service answers it: the callee's
 * own refusals as it stated them; no answer (the kit's notAnswered: no problem
 * of the callee's, a 5xx, this service's own token refused) as 503
 * `<service>.unavailable`, never a refusal the callee may not have made.
 */
export function relayFailure(service: string, error: unknown): never {
  if (notAnswered(error))
    throw problem(503, `${service}.unavailable`, `The ${service} service did not answer; try again later.`);
  throw error;
}
