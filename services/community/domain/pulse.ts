import { invalid, problem } from "../../kit/handler/problem.js";

/** A pulse item's origin, as the spec names them. */
export type PulseOrigin = "user" | "ai" | "system";

/**
 * The origin and actor of a pulse write (rule 6): X-PF-Origin: ai means ai
 * (a body naming another origin is refused); origin user needs the person in
 * X-PF-Subject, and ai or system never carry one (400 pulse.actor_refused).
 */
export function pulseProvenance(
  stated: string,
  headerAi: boolean,
  subject: string | undefined,
): { origin: PulseOrigin; actor: string | null } {
  // A stated origin is one of the three (the contract's rule).
  const origin = stated === "" ? (headerAi ? "ai" : subject ? "user" : "system") : (stated as PulseOrigin);
  if (headerAi && origin !== "ai") throw invalid("origin", "X-PF-Origin: ai publishes origin ai only");
  if (origin === "user") {
    if (!subject) throw problem(400, "pulse.actor_required", "origin user names the person in X-PF-Subject.");
    return { origin, actor: subject };
  }
  if (subject) throw problem(400, "pulse.actor_refused", `origin ${origin} has no actor: send no X-PF-Subject.`);
  return { origin, actor: null };
}

/** Only public activity is stored (422 otherwise). */
export function requirePublic(visibility: string): void {
  if (visibility !== "" && visibility !== "public")
    throw problem(422, "pulse.visibility_refused", "Only visibility public is accepted in the pulse.");
}

/** How far ahead of now an occurred_at may be (clock skew between services). */
export const FUTURE_SKEW_MS = 5 * 60_000;

/** occurred_at (the contract requires one): never more than the skew ahead of now; the past is taken as stated. */
export function requireOccurredAt(occurredAt: Date, now: Date): Date {
  if (occurredAt.getTime() > now.getTime() + FUTURE_SKEW_MS)
    throw invalid("occurred_at", "occurred_at is in the future");
  return occurredAt;
}
