import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../kit/auth/principal.js";

/**
 * Whose streams a call reaches: the person it acts for (a user token, or a service's X-PF-Subject) reaches their own;
 * a service acting for nobody reaches every stream; an app acting for nobody owns none and reaches none. Another
 * owner's object answers its 404, as a missing one.
 */
export type Reach = { owner: string } | "every" | "none";

export function reachOf(call: HandlerContext): Reach {
  const { person, principal } = callerOf(call);
  if (person !== undefined) return { owner: person };
  return principal.kind === "service" ? "every" : "none";
}

/** Whether an object of `owner` is within the call's reach. */
export function reaches(reach: Reach, owner: string): boolean {
  return reach === "every" || (reach !== "none" && reach.owner === owner);
}
