import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../kit/auth/principal.js";

/** Who acts on a call, as the audit and events name them. */
export interface Actor {
  /** svc:<key>, app:<id>, or the person's usr_ for their own token. */
  actor: string;
  /** The person a service acts for (X-PF-Subject), "" for none. */
  actingFor: string;
  /** The person whose own token calls (the `person` rule), undefined for services and apps. */
  ownToken?: string;
}

/** The caller of a manage, read or e-stop call: a service is recorded as the actor, with whom it acts for. */
export function actorOf(call: HandlerContext): Actor {
  const { principal } = callerOf(call);
  return {
    actor: principal.sub,
    actingFor: principal.actingSubject ?? "",
    ownToken: principal.kind === "user" && principal.mod === undefined ? principal.sub : undefined,
  };
}
