import type { Principal } from "../../kit/auth/principal.js";

/**
 * Who reads: the access-list entries that name the caller. Empty: the public
 * view (anonymous callers, apps and services acting for nobody).
 */
export interface Viewer {
  keys: string[];
}

export const PUBLIC_VIEW: Viewer = { keys: [] };

/** What reading needs that the caller did not give: a service token without X-PF-Subject ("today"). */
export class SubjectRequired extends Error {}

/**
 * The viewer a principal reads as. A person's own token: their subject and
 * role (`role:member` for usr_, `role:guest` for gst_). A service acting for a
 * person (delegate): that person, their role, and the groups and entitlements
 * the service resolved. A service acting for nobody is refused (the spec's
 * "today the service requires the subject id for any service token"). A
 * mod's token reads as the public.
 */
export function viewerOf(principal: Principal): Viewer {
  if (principal.kind === "anonymous" || principal.kind === "app" || principal.mod !== undefined) return PUBLIC_VIEW;
  if (principal.kind === "user") return personView(principal.sub, [], []);
  if (principal.actingSubject === undefined) throw new SubjectRequired();
  return personView(principal.actingSubject, principal.groups ?? [], principal.entitlements ?? []);
}

/** The person's keys. The subject is taken as enforcement checked it, never case-folded: that would merge two people. */
function personView(person: string, groups: readonly string[], entitlements: readonly string[]): Viewer {
  return {
    keys: [
      person,
      person.startsWith("usr_") ? "role:member" : "role:guest",
      ...groups.map((group) => `group:${group}`),
      ...entitlements.map((entitlement) => `entitlement:${entitlement}`),
    ],
  };
}
