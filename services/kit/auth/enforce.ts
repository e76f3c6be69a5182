import { getOption, type DescMethod } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { access as accessOption, type Access, Visibility } from "../../../gen/pf/v1/options_pb.js";
import { problem } from "../problem.js";
import { ANONYMOUS, principalKey, type Principal } from "./principal.js";
import type { TokenVerifier, VerifiedToken } from "./tokens.js";

const SUBJECT_HEADER = "x-pf-subject";
const STAFF_HEADER = "x-pf-staff";
const ORIGIN_HEADER = "x-pf-origin";

const accessByMethod = new WeakMap<DescMethod, Access>();

/** The access rule declared on an RPC; an RPC without one is refused to everyone. */
export function accessOf(method: DescMethod): Access {
  let found = accessByMethod.get(method);
  if (!found) {
    found = getOption(method, accessOption);
    accessByMethod.set(method, found);
  }
  return found;
}

/**
 * The one enforcement point: every RPC, called through the gateway or directly,
 * passes here. It reads the RPC's pf.v1.access option, verifies the token,
 * applies the visibility, capability and special rules, honours the X-PF-*
 * headers only from those allowed to send them, and leaves the Principal in
 * the context values for the handler's ownership checks.
 */
export function enforcement(verifier: TokenVerifier): Interceptor {
  return (next) => async (req) => {
    const rule = accessOf(req.method);
    const found = verifiedToken(verifier, req.header.get("authorization"));
    // A token seen before is answered from the verifier's cache without waiting.
    const token = found instanceof Promise ? await found : found;
    let principal: Principal;
    if (token === undefined) {
      // Anonymous use is declared per route: public reads, and first-party routes the spec opens to anonymous callers.
      if (!(rule.anonymous && (rule.visibility === Visibility.PUBLIC || rule.visibility === Visibility.FIRST_PARTY))) {
        throw problem(401, "auth.required", "This route needs a bearer token.");
      }
      principal = ANONYMOUS;
      refuseHeaders(req.header, "anonymous");
    } else {
      admit(rule, token.claims);
      principal = withHeaders(rule, principalOfToken(token.claims, token.raw), req.header);
    }
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
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
      throw problem(401, "auth.invalid", "The bearer token is not valid: bad signature, expired, or not a platform token.");
    },
  );
}

/** Refuses a token this rule does not let in. */
function admit(rule: Access, claims: VerifiedToken): void {
  const deny = (code: string, detail: string) => problem(403, code, detail);
  if (claims.mod !== undefined && rule.neverToMods) throw deny("auth.never_to_mods", "This route is never granted to mods.");
  if (rule.visibility === Visibility.UNSPECIFIED) throw deny("auth.no_access_rule", "This RPC declares no access rule.");
  switch (claims.kind) {
    case "user":
      if (rule.visibility === Visibility.INTERNAL) throw deny("auth.internal_only", "This route is internal: service tokens only.");
      if (rule.noPeople) throw deny("auth.people_refused", "This route is for services and apps, not user tokens.");
      break;
    case "app":
      if (rule.visibility === Visibility.INTERNAL) throw deny("auth.internal_only", "This route is internal: service tokens only.");
      if (rule.neverToApps) throw deny("auth.never_to_apps", "This route is never granted to apps.");
      if (rule.visibility === Visibility.FIRST_PARTY && !claims.fp) {
        throw deny("auth.first_party_only", "This route is for first-party apps only.");
      }
      requireCapabilities(rule, claims.caps);
      break;
    case "service":
      if (rule.onlyServices.length > 0 && !rule.onlyServices.includes(claims.sub.slice(4))) {
        throw deny("auth.service_not_allowed", `Only the ${rule.onlyServices.join(", ")} service may call this route.`);
      }
      requireCapabilities(rule, claims.caps);
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

function requireCapabilities(rule: Access, caps: string[]): void {
  const missingAny = rule.capabilities.length > 0 && !rule.capabilities.some((cap) => caps.includes(cap));
  const missingAll = rule.allCapabilities.filter((cap) => !caps.includes(cap));
  if (missingAny || missingAll.length > 0) {
    const needed = missingAny ? rule.capabilities.join(" or ") : missingAll.join(" and ");
    throw problem(403, "auth.capability_missing", `The token lacks the capability ${needed}.`, {
      capabilities: missingAny ? rule.capabilities : missingAll,
    });
  }
  if (rule.separateGrant && caps.some((cap) => !rule.capabilities.includes(cap))) {
    throw problem(403, "auth.separate_grant", `${rule.capabilities.join(", ")} is granted on its own: a token carrying other capabilities is refused here.`);
  }
}

function withHeaders(rule: Access, principal: Principal, header: Headers): Principal {
  if (principal.kind !== "service") refuseHeaders(header, principal.kind, rule.originFromApps && principal.kind === "app");
  const subject = header.get(SUBJECT_HEADER);
  const staff = header.get(STAFF_HEADER);
  const origin = header.get(ORIGIN_HEADER);
  if (subject === null && staff === null && origin === null) return principal;
  let actingSubject: string | undefined;
  if (subject !== null) {
    if (!rule.actingSubject) {
      throw problem(400, "auth.acting_subject_refused", "This route does not act for a person: X-PF-Subject is refused.");
    }
    if (!/^(usr|gst)_[0-9a-z]+$/i.test(subject)) {
      throw problem(400, "request.invalid", "X-PF-Subject must be a usr_ or gst_ subject.", { field: "X-PF-Subject" });
    }
    actingSubject = subject;
  }
  if (staff !== null && staff !== "1") throw problem(400, "request.invalid", "X-PF-Staff takes only the value 1.", { field: "X-PF-Staff" });
  if (origin !== null && origin !== "ai") throw problem(400, "request.invalid", "X-PF-Origin takes only the value ai.", { field: "X-PF-Origin" });
  return { ...principal, actingSubject, staff: staff === "1", origin: origin === "ai" ? "ai" : undefined };
}

/**
 * The X-PF-* headers (subject, staff, origin, groups, entitlements…) are what
 * services tell each other: from anyone else they are refused, never ignored,
 * except X-PF-Origin from an app where the route allows it.
 */
function refuseHeaders(header: Headers, who: string, originAllowed = false): void {
  header.forEach((_value, name) => {
    if (!name.startsWith("x-pf-") || (originAllowed && name === ORIGIN_HEADER)) return;
    throw problem(403, "auth.header_refused", `${name} is honoured only from service tokens, not from ${who} callers.`);
  });
}
