import { requirePerson, type Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/problem.js";

/**
 * A moderator or merchant manager: a service or first-party app holding the
 * capability, acting for nobody or for a person it states is staff
 * (X-PF-Staff: 1). A user token cannot show staff, so people on their own are
 * refused. Answers who acted, for the record.
 */
export function requireModerator(principal: Principal): string {
  if (principal.kind === "user" || (principal.actingSubject !== undefined && !principal.staff)) {
    throw problem(403, "coupons.staff_only", "Moderation is for staff: a service acting for a staff member (X-PF-Staff: 1), or acting for nobody.");
  }
  return principal.actingSubject ?? principal.sub;
}

/** The network user (usr_) a call acts for; guests cannot report or submit. */
export function requireMember(principal: Principal): string {
  const person = requirePerson(principal);
  if (!person.startsWith("usr_")) throw problem(403, "coupons.member_required", "Guests cannot do this: it needs a network user (usr_).");
  return person;
}
