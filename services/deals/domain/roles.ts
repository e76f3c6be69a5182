import { personOf, staffActorOf, type Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/problem.js";

/** The moderator of a moderation route, or 403 deals.moderator_required. */
export function requireModerator(principal: Principal): string {
  const actor = staffActorOf(principal);
  if (!actor) {
    throw problem(403, "deals.moderator_required", "Moderators only: a service acting for nobody, or acting for a person it states is staff (X-PF-Staff: 1).");
  }
  return actor;
}

/** The person a call acts for (X-PF-Subject from a service, or a user token), or 403 deals.person_required. */
export function requirePersonFor(principal: Principal): string {
  const person = personOf(principal);
  if (!person) throw problem(403, "deals.person_required", "This route acts for a person: a user token, or a service token with X-PF-Subject.");
  return person;
}
