import { requirePerson, staffActorOf, type Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";

/** A moderator or merchant manager (the kit's staff rule), or 403 coupons.staff_only. Answers who acted, for the record. */
export function requireModerator(principal: Principal): string {
  const actor = staffActorOf(principal);
  if (!actor) throw problem(403, "coupons.staff_only", "Moderation is for staff: a service acting for a staff member (X-PF-Staff: 1), or acting for nobody.");
  return actor;
}

/** The network user (usr_) a call acts for; guests cannot report or submit. */
export function requireMember(principal: Principal): string {
  const person = requirePerson(principal);
  if (!person.startsWith("usr_")) throw problem(403, "coupons.member_required", "Guests cannot do this: it needs a network user (usr_).");
  return person;
}
