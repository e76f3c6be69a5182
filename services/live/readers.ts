import type { HandlerContext } from "@connectrpc/connect";
import { callerOf, staffActorOf } from "../kit/auth/principal.js";
import type { ClientKeys } from "../kit/handler/client-address.js";
import { viewOf, type View } from "./domain/channels.js";

/**
 * Who reads, on routes that refuse nobody: the person acted for (a user token, or a service's X-PF-Subject), and
 * whether the caller is staff as the kit says (a service acting for nobody, or for a person it vouches with
 * X-PF-Staff: 1). Apps never are: these routes check no grant, so any app token reaches them.
 */
export function viewOfCall(call: HandlerContext, owner: string): View {
  const { person, principal } = callerOf(call);
  return viewOf(person, staffActorOf(principal, false) !== undefined, owner);
}

/** Whom a read counts as a viewer: the person or token's subject, else the client address's keyed hash ("" in process). */
export function viewerKey(keys: ClientKeys, call: HandlerContext): string {
  const { person, principal } = callerOf(call);
  const who = person ?? principal.sub;
  return who !== "" ? `sub:${who}` : keys.of(call.requestHeader);
}
