import { type Caller, staffActorOf } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";

/** The owner of network plans and perks. */
export const NETWORK = "network";

/**
 * The rule that admits "the grant" on vip's first-party routes (vip.proto: the
 * "staff" rule, ACTOR_STAFF, tried before the "person" rule): it shows drafts,
 * archived plans and retired perks, opens every creator's members,
 * memberships and policies, and alone manages the network's.
 */
const STAFF_RULE = "staff";

/** Who reads or writes, as far as row ownership goes: whether they hold the grant, and the person they act for. */
export interface Viewer {
  grant: boolean;
  person?: string;
}

/** The viewer on a first-party route: the grant is the staff rule having admitted the call. */
export function viewerOf(caller: Caller): Viewer {
  return { grant: caller.admittedBy === STAFF_RULE, person: caller.person };
}

/**
 * The viewer on a public read. Its documented rule admits every caller (a
 * staff alternative after it would never be tried), so the grant is read as
 * the staff rule reads it: a service or first-party app acting for nobody, or
 * a service acting for a person it vouches as staff. Third-party apps see
 * what the public sees.
 */
export function publicViewerOf(caller: Caller): Viewer {
  const { principal } = caller;
  const grant = !(principal.kind === "app" && !principal.fp) && staffActorOf(principal) !== undefined;
  return { grant, person: caller.person };
}

/** An owner of plans and perks, a channel at billing: a creator (usr_…) or the network; 400 naming the field. */
export function requireOwner(field: string, value: string): string {
  return value === NETWORK ? NETWORK : requireUser(field, value);
}

/** May this viewer see everything of this owner (drafts, archived, retired)? The grant, or the owner themselves. */
export function seesAllOf(viewer: Viewer, owner: string): boolean {
  return viewer.grant || (owner !== NETWORK && viewer.person === owner);
}

/**
 * The owner a new plan or perk belongs to: the acting creator by default.
 * The caller must manage it (`managerOf`), else 403 vip.not_owner: the
 * network's are staff's, a creator's the creator's.
 */
export function ownerForCreate(caller: Caller, requested: string): string {
  const owner = requested === "" ? caller.person : requested;
  if (owner === undefined || managerOf(caller, owner) === undefined) {
    const detail = "Creators make their own plans and perks (owner: the acting person); the network's are staff's.";
    throw problem(403, "vip.not_owner", detail);
  }
  return owner;
}

/** Who manages an owner's plans and perks: the creator, or staff for the network's. Answers the actor an audit names. */
export function managerOf(caller: Caller, owner: string): string | undefined {
  if (owner === NETWORK) return caller.admittedBy === STAFF_RULE ? caller.staff : undefined;
  return caller.person === owner ? owner : undefined;
}

/** Person-scoped reads (memberships, members, checks): the grant, or a person named; else 403 vip.forbidden. */
export function requireSelfOrGrant(caller: Caller, people: string[], what: string): void {
  if (viewerOf(caller).grant) return;
  if (caller.person !== undefined && people.includes(caller.person)) return;
  throw problem(403, "vip.forbidden", `Only ${what}, staff or a first-party service acting for nobody may read this.`);
}
