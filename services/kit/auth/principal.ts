import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { RelationRule } from "../../../gen/pf/v1/options_pb.js";
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
  /** X-PF-Groups from a service: the groups (roles) it resolved for the person it acts for. */
  readonly groups?: readonly string[];
  /** X-PF-Entitlements from a service: the entitlements it resolved for the person it acts for. */
  readonly entitlements?: readonly string[];
  /** X-PF-Staff: 1 from a service. */
  readonly staff: boolean;
  /** X-PF-Origin: ai. */
  readonly origin?: "ai";
  /** The raw bearer token, for forwarding on calls made on the caller's behalf. */
  readonly token?: string;
}

export const ANONYMOUS: Principal = { kind: "anonymous", sub: "", caps: new Set(), fp: false, ns: [], staff: false };

/**
 * The caller as enforcement admitted it: the principal, which of the RPC's
 * access rules let it in, and what that rule established (the person it acts
 * for, the staff actor an audit names).
 */
export interface Caller {
  readonly principal: Principal;
  /** The `name` of the access rule that admitted the call ("" for an unnamed main rule). */
  readonly admittedBy: string;
  /** The person the call acts for: a user token's sub, or a service's X-PF-Subject. */
  readonly person?: string;
  /** Set when the admitting rule requires staff: the acting staff person, or the service or app acting for nobody. */
  readonly staff?: string;
  /** The relation the admitting rule requires (`relation`), resolved after admission by `Relations` (`relations.ts`). */
  readonly requires?: RelationRule;
  /** Callers of the route's later rules that admit the token too, tried in order when `requires` is not held. */
  readonly otherwise?: readonly Caller[];
  /** The relation the caller was found to hold (`<key>.<name>`) and its role there ("" for a caller acting for nobody). */
  readonly relation?: { readonly name: string; readonly role: string };
}

const NOBODY: Caller = { principal: ANONYMOUS, admittedBy: "" };

export const callerKey = createContextKey<Caller>(NOBODY, { description: "pf caller" });

/** The caller enforcement admitted. */
export function callerOf(call: HandlerContext): Caller {
  return call.values.get(callerKey);
}

/** The caller's principal (token and headers). */
export function principalOf(call: HandlerContext): Principal {
  return call.values.get(callerKey).principal;
}

/**
 * The person the call acts for, on a route whose rule requires one (ACTOR_PERSON
 * or ACTOR_MEMBER): enforcement refused the call otherwise, so its absence here
 * is a contract without the requirement.
 */
export function actingPerson(call: HandlerContext): string {
  const { person } = callerOf(call);
  if (person === undefined)
    throw new Error(`${call.method.name} reads the acting person but its access rule does not require one`);
  return person;
}

/** The staff actor (ACTOR_STAFF, ACTOR_PLATFORM_STAFF), as `actingPerson`. */
export function staffActor(call: HandlerContext): string {
  const { staff } = callerOf(call);
  if (staff === undefined)
    throw new Error(`${call.method.name} reads the staff actor but its access rule does not require staff`);
  return staff;
}

/**
 * Who acts on a route whose rule requires a relation, for the audit: the
 * person holding it, else the service or app acting for nobody that the
 * relation admits (`acting_for_nobody`). As `actingPerson`, reading it where
 * no relation admitted the call is a contract without one.
 */
export function relatedActor(call: HandlerContext): string {
  const { relation, person, principal } = callerOf(call);
  if (relation === undefined)
    throw new Error(`${call.method.name} reads the related actor but no relation of its access rule admitted the call`);
  return person ?? principal.sub;
}

/**
 * The person a principal acts for: the acting subject from a service, or the
 * user of a user token. A mod's token (a `mod` claim) acts for nobody, even
 * a user token naming a person.
 */
export function personOf(principal: Principal): string | undefined {
  if (principal.mod !== undefined) return undefined;
  if (principal.actingSubject) return principal.actingSubject;
  return principal.kind === "user" ? principal.sub : undefined;
}

/**
 * Who acts as staff (a moderator, a merchant manager): a service or app acting
 * for nobody (enforcement already checked its token holds the route's
 * capability), or a service acting for a person it states is staff
 * (X-PF-Staff: 1). A person's own token never is: staff status is a service's
 * statement; nor a mod's token. Answers the actor an audit names, or undefined.
 */
export function staffActorOf(principal: Principal, apps = true): string | undefined {
  if (principal.mod !== undefined) return undefined;
  if (principal.kind !== "service" && !(apps && principal.kind === "app")) return undefined;
  if (principal.actingSubject !== undefined) return principal.staff ? principal.actingSubject : undefined;
  return principal.sub;
}

/**
 * Who owns what a call creates (a tool's job, an AI run) and whose quotas it counts against: the person it acts for
 * (a user or guest token, or a service's X-PF-Subject), else the app or service itself (`app:<id>`, `svc:<key>`);
 * "" for an anonymous caller, whom each service keys its own way.
 */
export function ownerOf(call: HandlerContext): string {
  const { person, principal } = callerOf(call);
  return person ?? principal.sub;
}
