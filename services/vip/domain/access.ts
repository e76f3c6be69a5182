import { personOf, requirePerson, staffActorOf, type Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";

/** The owner of network plans and perks. */
export const NETWORK = "network";

/**
 * "The grant" that shows drafts, archived plans and retired perks, and opens
 * every creator's members, memberships and policies: staff, i.e. a service
 * or first-party app acting for nobody (enforcement checked it holds the
 * route's capability) or a service acting for a person it states is staff
 * (X-PF-Staff: 1). Third-party apps never have it; people have it for their own things only.
 */
export function hasGrant(principal: Principal): boolean {
  if (principal.kind === "app" && !principal.fp) return false;
  return staffActorOf(principal) !== undefined;
}

/** An owner of plans and perks, a channel at billing: a creator (usr_…) or the network; 400 naming the field. */
export function requireOwner(field: string, value: string): string {
  return value === NETWORK ? NETWORK : requireUser(field, value);
}

/** May this caller see everything of this owner (drafts, archived, retired)? The grant, or the owner themselves. */
export function seesAllOf(principal: Principal, owner: string): boolean {
  return hasGrant(principal) || (owner !== NETWORK && personOf(principal) === owner);
}

/** The owner a new plan or perk belongs to: the acting creator by default, or the network (staff only). */
export function ownerForCreate(principal: Principal, requested: string): string {
  if (requested === NETWORK) {
    requireStaff(principal);
    return NETWORK;
  }
  const person = requirePerson(principal);
  if (requested !== "" && requested !== person) {
    throw problem(403, "vip.not_owner", "Creators manage their own plans and perks only: owner must be the acting person (or network, for staff).");
  }
  return person;
}

/** Who manages an owner's plans and perks: the creator themselves, or staff for the network's. Answers the actor. */
export function managerOf(principal: Principal, owner: string): string | undefined {
  if (owner === NETWORK) return staffOf(principal);
  const person = personOf(principal);
  return person === owner ? person : undefined;
}

/** Staff, or 403 vip.staff_required. Answers the actor an audit names. */
export function requireStaff(principal: Principal): string {
  const actor = staffOf(principal);
  if (!actor) {
    throw problem(403, "vip.staff_required", "Network plans and perks need staff: a service acting for nobody, or for a person it states is staff (X-PF-Staff: 1).");
  }
  return actor;
}

function staffOf(principal: Principal): string | undefined {
  return hasGrant(principal) ? staffActorOf(principal) : undefined;
}

/** Person-scoped reads (memberships, members, checks): the person themselves, or the grant; otherwise 403 vip.forbidden. */
export function requireSelfOrGrant(principal: Principal, people: string[], what: string): void {
  if (hasGrant(principal)) return;
  const person = personOf(principal);
  if (person && people.includes(person)) return;
  throw problem(403, "vip.forbidden", `Only ${what}, staff or a first-party service acting for nobody may read this.`);
}
