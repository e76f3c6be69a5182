import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { createContextKey, createContextValues, type ContextValues, type Interceptor } from "@connectrpc/connect";
import {
  Actor,
  type Access,
  access as accessOption,
  token_audience,
  Visibility,
} from "../../../gen/pf/v1/options_pb.js";
import { invalid, problem } from "../handler/problem.js";
import { isSubjectId } from "../handler/subjects.js";
import { ANONYMOUS, type Caller, callerKey, type Principal, personOf, staffActorOf } from "./principal.js";
import { AUDIENCE, type TokenVerifier, type VerifiedToken } from "./tokens.js";

const SUBJECT_HEADER = "x-pf-subject";
const STAFF_HEADER = "x-pf-staff";
const ORIGIN_HEADER = "x-pf-origin";
const GROUPS_HEADER = "x-pf-groups";
const ENTITLEMENTS_HEADER = "x-pf-entitlements";

/** One name of X-PF-Groups or X-PF-Entitlements: what access lists name after `group:` or `entitlement:`. */
const LIST_NAME = /^[a-z0-9][a-z0-9_.:-]{0,127}$/i;
/** At most this many names per list header. */
const LIST_MAX = 100;

/** An RPC's access: its rules in the order they are tried (the main rule, then its alternatives), and its token audience. */
export interface RouteAccess {
  readonly rules: readonly Access[];
  readonly audience: string;
}

const accessByMethod = new WeakMap<DescMethod, RouteAccess>();

/** The access rule declared on an RPC; an RPC without one is refused to everyone. */
export function accessOf(method: DescMethod): Access {
  return routeAccessOf(method).rules[0];
}

/** The access rules of an RPC, main rule first, and the audience its tokens carry. */
export function routeAccessOf(method: DescMethod): RouteAccess {
  let found = accessByMethod.get(method);
  if (!found) {
    const main = getOption(method, accessOption);
    found = { rules: [main, ...main.alternatives], audience: getOption(method.parent, token_audience) || AUDIENCE };
    accessByMethod.set(method, found);
  }
  return found;
}

/**
 * The one enforcement point: every RPC, called through the gateway or
 * directly, is admitted here from its pf.v1.access option. It verifies the
 * token, tries the RPC's rules in order (visibility, capability, special rules,
 * the actor it must act for), honours the X-PF-* headers only from those
 * allowed to send them, and answers the Caller the handler reads. The gateway
 * admits a call here before it looks at the request, so a caller without the
 * right learns nothing about a route's shape, and hands that admission to the
 * call (`admittedCall`): a call is admitted once, not twice.
 */
export class Admission {
  /** Callers this admission answered, with the method each was admitted for, that no call has taken yet (`admittedCall`). */
  private readonly vouched = new WeakMap<Caller, DescMethod>();

  constructor(private readonly verifier: TokenVerifier) {}

  /** The admitted caller, or the refusal (a problem) of the last rule tried. */
  admit(method: DescMethod, header: Headers): Caller | Promise<Caller> {
    const admitted = this.decide(method, header);
    if (admitted instanceof Promise)
      return admitted.then((caller) => {
        this.vouched.set(caller, method);
        return caller;
      });
    this.vouched.set(admitted, method);
    return admitted;
  }

  private decide(method: DescMethod, header: Headers): Caller | Promise<Caller> {
    const route = routeAccessOf(method);
    const found = verifiedToken(this.verifier, header.get("authorization"));
    // A token seen before is answered from the verifier's cache without waiting.
    if (found instanceof Promise) return found.then((token) => admitCaller(route, token, header));
    return admitCaller(route, found, header);
  }

  /**
   * Whether a caller may discover what is internal (the whole OpenAPI
   * document, RPC reflection): a valid service token for the platform
   * audience without a `mod` claim, as internal routes take. No token
   * answers false; a token that is not valid is refused as everywhere (401).
   */
  async discoversInternals(authorization: string | null): Promise<boolean> {
    const token = await verifiedToken(this.verifier, authorization);
    if (token === undefined) return false;
    const { kind, mod, aud } = token.claims;
    return kind === "service" && mod === undefined && aud.includes(AUDIENCE);
  }

  /**
   * The interceptor that admits every call and leaves its Caller in the
   * context values. A call the gateway admitted for this same method with
   * these same headers (`admittedCall`) takes that Caller instead, once: only
   * a Caller this admission answered counts, and context values never cross
   * a process, so a call from elsewhere is always admitted here.
   */
  interceptor(): Interceptor {
    return (next) => async (req) => {
      const handed = req.contextValues.get(admittedKey);
      if (handed !== undefined) req.contextValues.delete(admittedKey);
      if (handed?.method === req.method && this.vouched.get(handed.caller) === req.method) {
        this.vouched.delete(handed.caller);
        req.contextValues.set(callerKey, handed.caller);
        return next(req);
      }
      const admitted = this.decide(req.method, req.header);
      req.contextValues.set(callerKey, admitted instanceof Promise ? await admitted : admitted);
      return next(req);
    };
  }
}

/** A call the gateway admitted before reading its request: the method, and the Caller `Admission.admit` answered. */
interface Admitted {
  readonly method: DescMethod;
  readonly caller: Caller;
}

const admittedKey = createContextKey<Admitted | undefined>(undefined, { description: "pf admitted by the gateway" });

/**
 * The context values of a call the gateway admitted already (with the headers
 * the call carries), so the interceptor takes that admission instead of
 * repeating it.
 */
export function admittedCall(method: DescMethod, caller: Caller): ContextValues {
  return createContextValues().set(admittedKey, { method, caller });
}

type Bearer = { raw: string; claims: VerifiedToken };

function verifiedToken(verifier: TokenVerifier, authorization: string | null): Bearer | Promise<Bearer> | undefined {
  if (authorization === null || authorization === "") return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (!match) throw problem(401, "auth.invalid", "Authorization must be `Bearer <token>`.");
  const raw = match[1];
  const cached = verifier.cached(raw);
  if (cached) return { raw, claims: cached };
  return verifier.verify(raw).then(
    (claims) => ({ raw, claims }),
    () => {
      throw problem(
        401,
        "auth.invalid",
        "The bearer token is not valid: bad signature, expired, or not a platform token.",
      );
    },
  );
}

/** Whether a rule lets callers without a token in: public routes, and first-party routes the spec opens to them. */
export function admitsAnonymous(rule: Access): boolean {
  return rule.anonymous && (rule.visibility === Visibility.PUBLIC || rule.visibility === Visibility.FIRST_PARTY);
}

function admitCaller(route: RouteAccess, token: Bearer | undefined, header: Headers): Caller {
  if (token === undefined) {
    // Anonymous use is declared per rule: public reads, and first-party routes the spec opens to anonymous callers.
    const open = route.rules.filter(admitsAnonymous);
    if (open.length === 0) throw problem(401, "auth.required", "This route needs a bearer token.");
    refuseHeaders(header, "anonymous", false, new Set(open.flatMap((rule) => rule.credentialHeaders)));
    return withFallbacks(open.map((rule) => related(rule, { principal: ANONYMOUS, admittedBy: rule.name })));
  }
  if (!token.claims.aud.includes(route.audience)) {
    throw problem(401, "auth.wrong_audience", `This route takes tokens for the audience ${route.audience}.`);
  }
  const principal = principalOfToken(token.claims, token.raw);
  let refusal: unknown;
  const admitted: Caller[] = [];
  for (const rule of route.rules) {
    try {
      admitted.push(related(rule, admitByRule(rule, principal, header)));
      // Later rules matter only while every rule admitting so far still has a relation to resolve.
      if (rule.relation === undefined) break;
    } catch (error) {
      refusal = error;
    }
  }
  if (admitted.length === 0) throw refusal;
  return withFallbacks(admitted);
}

/** The Caller of a rule, carrying the relation it requires (resolved by `Relations` once the request is read). */
function related(rule: Access, caller: Caller): Caller {
  return rule.relation === undefined ? caller : { ...caller, requires: rule.relation };
}

/**
 * The first rule's Caller; when it requires a relation, the Callers of the later rules admitting the token too,
 * tried in order where the relation is not held (a reader alternative beside an editor rule).
 */
function withFallbacks([first, ...later]: Caller[]): Caller {
  return first.requires === undefined || later.length === 0 ? first : { ...first, otherwise: later };
}

/** Admits a principal by one rule, or throws that rule's refusal. */
function admitByRule(rule: Access, principal: Principal, header: Headers): Caller {
  admitToken(rule, principal);
  const acting = withHeaders(rule, principal, header);
  const person = personOf(acting);
  const caller: Caller = { principal: acting, admittedBy: rule.name, person };
  switch (rule.actor) {
    case Actor.PERSON:
      if (!person)
        throw problem(
          403,
          "auth.person_required",
          "This call acts for a person: use a user token, or a service token with X-PF-Subject.",
        );
      return ownAct(rule, caller);
    case Actor.MEMBER:
      if (!person?.startsWith("usr_"))
        throw problem(
          403,
          "auth.member_required",
          "This call acts for a network user (usr_): guests and callers acting for nobody cannot.",
        );
      return ownAct(rule, caller);
    case Actor.STAFF:
    case Actor.PLATFORM_STAFF: {
      const staff = staffActorOf(acting, rule.actor === Actor.STAFF);
      if (!staff) {
        throw problem(
          403,
          "auth.staff_required",
          "Staff only: a service acting for nobody, or for a person it vouches as staff (X-PF-Staff: 1).",
        );
      }
      return { ...caller, staff };
    }
    case Actor.AI_OUTPUT:
      if (person !== undefined || acting.origin !== "ai") {
        throw problem(
          403,
          "auth.ai_origin_required",
          "This rule admits AI output only: sent for nobody, marked X-PF-Origin: ai.",
        );
      }
      return caller;
    default:
      return caller;
  }
}

/**
 * A person's own act (a vote, a like, an edit of their own) is never AI
 * output: AI output is never attributed to a person (`no_ai_origin`).
 */
function ownAct(rule: Access, caller: Caller): Caller {
  if (rule.noAiOrigin && caller.principal.origin === "ai")
    throw problem(403, "auth.person_required", "AI output (X-PF-Origin: ai) never acts as the person it names here.");
  return caller;
}

/** Refuses a token this rule does not let in. */
function admitToken(rule: Access, principal: Principal): void {
  const deny = (code: string, detail: string) => problem(403, code, detail);
  if (rule.visibility === Visibility.UNSPECIFIED)
    throw deny("auth.no_access_rule", "This RPC declares no access rule.");
  // Internal is "service-to-service only; never granted to apps or mods".
  if (principal.mod !== undefined && (rule.neverToMods || rule.visibility === Visibility.INTERNAL)) {
    throw deny("auth.never_to_mods", "This route is never granted to mods.");
  }
  switch (principal.kind) {
    case "user":
      if (rule.visibility === Visibility.INTERNAL)
        throw deny("auth.internal_only", "This route is internal: service tokens only.");
      if (rule.noPeople) throw deny("auth.people_refused", "This route is for services and apps, not user tokens.");
      // A mod acts by the capabilities granted to it, never as the person its token names.
      if (principal.mod !== undefined) requireCapabilities(rule, principal.caps, true);
      break;
    case "app":
      if (rule.visibility === Visibility.INTERNAL)
        throw deny("auth.internal_only", "This route is internal: service tokens only.");
      if (rule.neverToApps) throw deny("auth.never_to_apps", "This route is never granted to apps.");
      if (rule.visibility === Visibility.FIRST_PARTY && !principal.fp) {
        throw deny("auth.first_party_only", "This route is for first-party apps only.");
      }
      requireCapabilities(rule, principal.caps, principal.mod !== undefined);
      break;
    case "service":
      if (rule.onlyServices.length > 0 && !rule.onlyServices.includes(principal.service ?? "")) {
        throw deny("auth.service_not_allowed", `Only the ${rule.onlyServices.join(", ")} service may call this route.`);
      }
      requireCapabilities(rule, principal.caps, principal.mod !== undefined);
      break;
  }
}

// Verified tokens are cached by the verifier, so the principal built from one is too.
const principals = new WeakMap<VerifiedToken, Principal>();

function principalOfToken(claims: VerifiedToken, raw: string): Principal {
  let principal = principals.get(claims);
  if (principal) return principal;
  principal = {
    kind: claims.kind,
    sub: claims.sub,
    service: claims.kind === "service" ? claims.sub.slice(4) : undefined,
    caps: new Set(claims.caps),
    fp: claims.fp,
    appId: claims.app_id ?? (claims.kind === "app" ? claims.sub.slice(4) : undefined),
    projectId: claims.project_id,
    env: claims.env,
    ns: claims.ns,
    mod: claims.mod,
    staff: false,
    token: raw,
  };
  principals.set(claims, principal);
  return principal;
}

/**
 * Refuses a token without the rule's capability. A mod's token always needs
 * one: a rule that leaves its capability unchecked, or names none, admits no
 * mod (a mod acts only by what was granted to it).
 */
function requireCapabilities(rule: Access, caps: ReadonlySet<string>, mod = false): void {
  if (mod && rule.capabilities.length === 0 && rule.allCapabilities.length === 0)
    throw problem(403, "auth.never_to_mods", "A mod acts only by its capabilities, and this route names none.");
  if (rule.capabilityUnchecked && !mod) return;
  const missingAny = rule.capabilities.length > 0 && !rule.capabilities.some((cap) => caps.has(cap));
  const missingAll = rule.allCapabilities.filter((cap) => !caps.has(cap));
  if (missingAny || missingAll.length > 0) {
    const needed = missingAny ? rule.capabilities.join(" or ") : missingAll.join(" and ");
    throw problem(403, "auth.capability_missing", `The token lacks the capability ${needed}.`, {
      capabilities: missingAny ? rule.capabilities : missingAll,
    });
  }
  if (rule.separateGrant && [...caps].some((cap) => !rule.capabilities.includes(cap))) {
    throw problem(
      403,
      "auth.separate_grant",
      `${rule.capabilities.join(", ")} is granted on its own: a token carrying other capabilities is refused here.`,
    );
  }
}

/** Whether X-PF-Subject may name the person a service acts for: first-party routes always ("people acting through them"). */
function actsForPeople(rule: Access): boolean {
  return rule.actingSubject || rule.visibility === Visibility.FIRST_PARTY;
}

function withHeaders(rule: Access, principal: Principal, header: Headers): Principal {
  if (principal.kind !== "service")
    refuseHeaders(
      header,
      principal.kind,
      rule.originFromApps && principal.kind === "app",
      new Set(rule.credentialHeaders),
    );
  const subject = header.get(SUBJECT_HEADER);
  const staff = header.get(STAFF_HEADER);
  const origin = header.get(ORIGIN_HEADER);
  const groups = header.get(GROUPS_HEADER);
  const entitlements = header.get(ENTITLEMENTS_HEADER);
  if (subject === null && staff === null && origin === null && groups === null && entitlements === null)
    return principal;
  if (principal.mod !== undefined && (subject ?? staff ?? groups ?? entitlements) !== null) {
    throw problem(
      403,
      "auth.never_to_mods",
      "A mod never acts for a person: X-PF-Subject, X-PF-Staff, X-PF-Groups and X-PF-Entitlements are refused from its token.",
    );
  }
  let actingSubject: string | undefined;
  if (subject !== null) {
    if (!actsForPeople(rule)) {
      throw problem(
        400,
        "auth.acting_subject_refused",
        "This route does not act for a person: X-PF-Subject is refused.",
      );
    }
    if (!isSubjectId(subject)) {
      throw invalid("X-PF-Subject", "X-PF-Subject must be a usr_ or gst_ subject (1 to 64 of a-z 0-9).");
    }
    actingSubject = subject;
  }
  if (staff !== null && staff !== "1") throw invalid("X-PF-Staff", "X-PF-Staff takes only the value 1.");
  if (origin !== null && origin !== "ai") throw invalid("X-PF-Origin", "X-PF-Origin takes only the value ai.");
  return {
    ...principal,
    actingSubject,
    staff: staff === "1",
    origin: origin === "ai" ? "ai" : undefined,
    groups: groups === null ? undefined : nameList(groups, "X-PF-Groups"),
    entitlements: entitlements === null ? undefined : nameList(entitlements, "X-PF-Entitlements"),
  };
}

/** A comma-separated list header (X-PF-Groups, X-PF-Entitlements) as its names; "" is the empty list. */
function nameList(value: string, field: string): string[] {
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.length > LIST_MAX || !names.every((name) => LIST_NAME.test(name))) {
    throw problem(
      400,
      "request.invalid",
      `${field} takes at most ${LIST_MAX} comma-separated names of letters, digits and _.:- (128 characters each).`,
      { field },
    );
  }
  return [...new Set(names)];
}

/**
 * The X-PF-* headers (subject, staff, origin, groups, entitlements…) are what
 * services tell each other: from anyone else they are refused, never ignored,
 * except X-PF-Origin from an app where the route allows it, and a credential
 * the route reads itself (`credential_headers`: a device's).
 */
function refuseHeaders(
  header: Headers,
  who: string,
  originAllowed = false,
  credentials: ReadonlySet<string> = new Set(),
): void {
  header.forEach((_value, name) => {
    if (!name.startsWith("x-pf-") || (originAllowed && name === ORIGIN_HEADER) || credentials.has(name)) return;
    throw problem(403, "auth.header_refused", `${name} is honoured only from service tokens, not from ${who} callers.`);
  });
}
