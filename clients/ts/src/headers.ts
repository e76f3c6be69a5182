/** Who calls: the token, and what a service token says of the person it acts for (the X-PF-* headers). */
export interface Caller {
  /** The bearer token, or a function answering the current one (asked on each call). Unset: anonymous. */
  token?: string | (() => string | Promise<string>);
  /** X-PF-Subject: the person a service token acts for, a network user (`usr_…`) or a guest (`gst_…`). */
  subject?: string;
  /** X-PF-Staff: 1, the person a service token acts for is staff. */
  staff?: boolean;
  /** X-PF-Origin: ai, what the call sends is AI output (from a service, or an app where the route allows it). */
  origin?: "ai";
  /** X-PF-Groups: the groups (roles) a service resolved for the person it acts for. */
  groups?: readonly string[];
  /** X-PF-Entitlements: the entitlements a service resolved for the person it acts for. */
  entitlements?: readonly string[];
}

/**
 * Sets the caller's token and X-PF-* headers on a call's headers, leaving any the call sets itself (a subject for
 * one call). The platform checks them (a user or app token sending X-PF-Subject is refused with 403
 * `auth.header_refused`, a subject of another shape with 400 `request.invalid`); the types only keep values it
 * never takes (a staff flag other than 1, an origin other than ai) from being written.
 */
export async function addCallerHeaders(header: Headers, caller: Caller): Promise<void> {
  const set = (name: string, value: string) => {
    if (!header.has(name)) header.set(name, value);
  };
  if (!header.has("authorization")) {
    const token = typeof caller.token === "function" ? await caller.token() : caller.token;
    if (token) set("authorization", `Bearer ${token}`);
  }
  if (caller.subject !== undefined) set("x-pf-subject", caller.subject);
  if (caller.staff) set("x-pf-staff", "1");
  if (caller.origin !== undefined) set("x-pf-origin", caller.origin);
  if (caller.groups !== undefined) set("x-pf-groups", caller.groups.join(","));
  if (caller.entitlements !== undefined) set("x-pf-entitlements", caller.entitlements.join(","));
}
