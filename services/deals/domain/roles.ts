import { personOf, type Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/problem.js";

/**
 * Who acts as a moderator: a service (or first-party app) acting on its own
 * and holding `capability`, or a service acting for a person it states is
 * staff (X-PF-Staff: 1) on a route whose capability it holds (enforcement
 * checked that). A person's own token never is: staff status is a service's
 * statement. Answers the actor the audit names, or undefined.
 */
export function moderatorOf(principal: Principal, capability: string): string | undefined {
  if (principal.kind !== "service" && principal.kind !== "app") return undefined;
  if (principal.actingSubject) return principal.staff ? principal.actingSubject : undefined;
  return principal.caps.has(capability) ? principal.sub : undefined;
}

/** The moderator of a moderation route, or 403 deals.moderator_required. */
export function requireModerator(principal: Principal, capability: string): string {
  const actor = moderatorOf(principal, capability);
  if (!actor) {
    throw problem(403, "deals.moderator_required", "Moderators only: a service holding the capability, or acting for a person it states is staff (X-PF-Staff: 1).");
  }
  return actor;
}

/** The person a call acts for (X-PF-Subject from a service, or a user token), or 403 deals.person_required. */
export function requirePersonFor(principal: Principal): string {
  const person = personOf(principal);
  if (!person) throw problem(403, "deals.person_required", "This route acts for a person: a user token, or a service token with X-PF-Subject.");
  return person;
}
