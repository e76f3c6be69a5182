import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { problem } from "../problem.js";
import type { TokenKind } from "./tokens.js";

/** Who is calling, as enforcement established it from the token and the X-PF-* headers; shared, never changed. */
export interface Principal {
  readonly kind: TokenKind | "anonymous";
  /** The token's sub: usr_/gst_, app:<id>, svc:<key>; empty when anonymous. */
  readonly sub: string;
  /** The service key of a service token. */
  readonly service?: string;
  readonly caps: ReadonlySet<string>;
  readonly fp: boolean;
  readonly appId?: string;
  readonly projectId?: string;
  readonly env?: string;
  readonly ns: readonly string[];
  readonly mod?: string;
  /** X-PF-Subject: the person a service acts for. */
  readonly actingSubject?: string;
  /** X-PF-Staff: 1 from a service. */
  readonly staff: boolean;
  /** X-PF-Origin: ai. */
  readonly origin?: "ai";
  /** The raw bearer token, for forwarding on calls made on the caller's behalf. */
  readonly token?: string;
}

export const ANONYMOUS: Principal = { kind: "anonymous", sub: "", caps: new Set(), fp: false, ns: [], staff: false };

export const principalKey = createContextKey<Principal>(ANONYMOUS, { description: "pf principal" });

export function principalOf(ctx: HandlerContext): Principal {
  return ctx.values.get(principalKey);
}

/** The person a call acts for: the acting subject from a service, or the user of a user token. */
export function personOf(principal: Principal): string | undefined {
  if (principal.actingSubject) return principal.actingSubject;
  return principal.kind === "user" ? principal.sub : undefined;
}

/** The person a call acts for, or 403 when there is none. */
export function requirePerson(principal: Principal): string {
  const person = personOf(principal);
  if (!person) throw problem(403, "auth.person_required", "This call acts for a person: use a user token, or a service token with X-PF-Subject.");
  return person;
}

/**
 * Who acts as staff (a moderator, a merchant manager): a service or app acting
 * for nobody (enforcement already checked its token holds the route's
 * capability), or a service acting for a person it states is staff
 * (X-PF-Staff: 1). A person's own token never is: staff status is a service's
 * statement. Answers the actor an audit names, or undefined.
 */
export function staffActorOf(principal: Principal): string | undefined {
  if (principal.kind !== "service" && principal.kind !== "app") return undefined;
  if (principal.actingSubject !== undefined) return principal.staff ? principal.actingSubject : undefined;
  return principal.sub;
}
