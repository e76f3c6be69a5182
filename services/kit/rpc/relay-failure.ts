import { ConnectError } from "@connectrpc/connect";
import { ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";
import { problem } from "../handler/problem.js";
import { notAnswered } from "../runtime/call.js";

/**
 * Whether the callee decided about the request itself although `notAnswered`
 * counts its status as no answer: a 403 or 429 with the callee's own code (a
 * person's `post.not_author`, `vip.members_only`, the person's rate), not an
 * `auth.*` refusal of the caller's own credentials.
 */
export function calleeDecided(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  const [found] = error.findDetails(ProblemSchema);
  return found !== undefined && (found.status === 403 || found.status === 429) && !found.code.startsWith("auth.");
}

/** `notAnswered`, less the callee's own decisions (`calleeDecided`): retry with the same key, never report a refusal. */
export function unanswered(error: unknown): boolean {
  return notAnswered(error) && !calleeDecided(error);
}

/**
 * A failed call to another service as the caller answers it: the callee's own
 * refusals as it stated them; no answer (`unanswered`: no problem of the
 * callee's, a 5xx, the caller's own token refused) as 503
 * `<service>.unavailable`, never a refusal the callee may not have made.
 */
export function relayFailure(service: string, error: unknown): never {
  if (unanswered(error))
    throw problem(503, `${service}.unavailable`, `The ${service} service did not answer; try again later.`);
  throw error;
}
