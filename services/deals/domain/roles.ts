import { staffActorOf, type Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";

/** The moderator of a moderation route, or 403 deals.moderator_required. */
export function requireModerator(principal: Principal): string {
  const actor = staffActorOf(principal);
  if (!actor) {
    throw problem(403, "deals.moderator_required", "Moderators only: a service acting for nobody, or acting for a person it states is staff (X-PF-Staff: 1).");
  }
  return actor;
}
