import type { HandlerContext } from "@connectrpc/connect";
import { principalOf, staffActor, staffActorOf } from "../kit/auth/principal.js";

/** Who moderates in this call, for the audit: the actor, the person forwarded, and the relaying service. */
export function moderatorOf(call: HandlerContext): { actor: string; person: string | null; relayedBy: string } {
  const principal = principalOf(call);
  return { actor: staffActor(call), person: principal.actingSubject ?? null, relayedBy: principal.service ?? "" };
}

/**
 * Whether a reader is a moderator on a route without a staff rule (thread
 * reads): a service acting as itself, or one vouching X-PF-Staff: 1 for the
 * person, holding community.comment.moderate. Apps never are.
 */
export function readsAsModerator(call: HandlerContext): boolean {
  const principal = principalOf(call);
  return principal.caps.has("community.comment.moderate") && staffActorOf(principal, false) !== undefined;
}
