import { jwtVerify, SignJWT } from "jose";
import { randomUUID } from "node:crypto";
import { SUBJECT } from "../handler/subjects.js";
import type { PlatformKeys } from "./keys.js";

/** The platform's token audience; a service may declare its own (`pf.v1.token_audience`). */
export const AUDIENCE = "pf";

/** The issuer the platform mints tokens as (`iss`); the verifier takes no other. */
export const ISSUER = "pf";

export type TokenKind = "user" | "app" | "service";

const HOUR = 3600;

/**
 * The longest a token of each kind may live (`exp` − `iat`), at minting and
 * at verification: people and services a day (services re-mint theirs hourly),
 * apps 30 days (their tokens are configured by hand).
 */
export const MAX_LIFETIME_SECONDS: Readonly<Record<TokenKind, number>> = {
  user: 24 * HOUR,
  app: 30 * 24 * HOUR,
  service: 24 * HOUR,
};

/** The subject each kind of token names: people's by the platform's one subject grammar. */
const SUBJECTS: Readonly<Record<TokenKind, RegExp>> = {
  user: SUBJECT,
  app: /^app:.+$/,
  service: /^svc:[a-z]+$/,
};

/**
 * Why the verifier refuses a token of this kind, subject and lifetime, or
 * undefined: minting (and so the token command) refuses the same.
 */
export function tokenFault(kind: TokenKind, sub: string, lifetimeSeconds: number): string | undefined {
  if (!SUBJECTS[kind].test(sub)) return `sub ${JSON.stringify(sub)} does not fit a ${kind} token`;
  const max = MAX_LIFETIME_SECONDS[kind];
  if (lifetimeSeconds > max) return `a ${kind} token lives at most ${max} seconds`;
  return undefined;
}

/** What a caller asks to be put in a token (see ARCHITECTURE "Principals and enforcement"). */
export interface TokenClaims {
  kind: TokenKind;
  /** usr_/gst_ for people, app:<id> for apps, svc:<key> for services; derived when omitted. */
  sub?: string;
  /** The service key of a service token. */
  svc?: string;
  caps?: string[];
  fp?: boolean;
  app_id?: string;
  project_id?: string;
  env?: "production" | "sandbox";
  ns?: string[];
  mod?: string;
  /**
   * The audience or audiences (default the platform's, `pf`): a service that
   * declares its own `token_audience` takes only tokens for it, the others only
   * tokens for `pf`. A token for both names both.
   */
  aud?: string | string[];
  /** Lifetime in seconds (default one hour; at most MAX_LIFETIME_SECONDS of its kind). */
  ttl?: number;
}

export async function mintToken(keys: PlatformKeys, claims: TokenClaims): Promise<string> {
  const sub = claims.sub ?? defaultSubject(claims);
  const { ttl = 3600, sub: _sub, svc: _svc, aud = AUDIENCE, ...rest } = claims;
  const fault = tokenFault(claims.kind, sub, ttl) ?? audienceFault(aud);
  if (fault) throw new Error(`${fault}: the platform would refuse it`);
  const payload = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "EdDSA", kid: keys.kid, typ: "JWT" })
    .setIssuer(ISSUER)
    .setSubject(sub)
    .setAudience(Array.isArray(aud) && aud.length === 1 ? aud[0] : aud)
    .setIssuedAt()
    .setExpirationTime(`${ttl}s`)
    .setJti(randomUUID())
    .sign(keys.signing);
}

/** An audience names a service's `token_audience` (or `pf`): lowercase letters, digits, `.` and `-`. */
const AUDIENCE_NAME = /^[a-z][a-z0-9.-]{0,63}$/;

/** Why no route would take a token for these audiences, or undefined. */
function audienceFault(aud: string | string[]): string | undefined {
  const names = typeof aud === "string" ? [aud] : aud;
  if (names.length === 0) return "a token needs an audience";
  const bad = names.find((name) => !AUDIENCE_NAME.test(name));
  return bad === undefined ? undefined : `aud ${JSON.stringify(bad)} is not an audience name`;
}

function defaultSubject(claims: TokenClaims): string {
  if (claims.kind === "service") {
    if (!claims.svc) throw new Error("a service token needs --svc");
    return `svc:${claims.svc}`;
  }
  if (claims.kind === "app") {
    if (!claims.app_id) throw new Error("an app token needs --app-id");
    return `app:${claims.app_id}`;
  }
  throw new Error("a user token needs --sub (usr_… or gst_…)");
}

/** Verified claims, as enforcement reads them. */
export interface VerifiedToken {
  kind: TokenKind;
  sub: string;
  caps: string[];
  fp: boolean;
  app_id?: string;
  project_id?: string;
  env?: string;
  ns: string[];
  mod?: string;
  /** The audiences the token is for; enforcement checks the route's. */
  aud: string[];
  exp: number;
}

/** How far the clocks of the platform's instances may disagree: a token's iat may be this far ahead. */
const CLOCK_SKEW_SECONDS = 60;

/**
 * Verifies EdDSA tokens, remembering each verified token until it expires so a
 * hot caller pays for the signature check once.
 */
export class TokenVerifier {
  private readonly verified = new Map<string, VerifiedToken>();

  constructor(
    private readonly keys: PlatformKeys,
    private readonly maxCached = 10_000,
  ) {}

  /** The token's claims if it was verified before and has not expired since. */
  cached(token: string, nowSeconds = Date.now() / 1000): VerifiedToken | undefined {
    const cached = this.verified.get(token);
    return cached && cached.exp > nowSeconds ? cached : undefined;
  }

  async verify(token: string): Promise<VerifiedToken> {
    const cached = this.cached(token);
    if (cached) return cached;
    const { payload } = await jwtVerify(token, this.keys.verifying, {
      algorithms: ["EdDSA"],
      typ: "JWT",
      issuer: ISSUER,
      // A token without an expiry would never expire.
      requiredClaims: ["exp", "iat", "sub", "aud"],
    });
    const result = readClaims(payload);
    if (this.verified.size >= this.maxCached) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, result);
    return result;
  }
}

function readClaims(payload: Record<string, unknown>): VerifiedToken {
  const kind = payload.kind;
  const sub = payload.sub;
  if (kind !== "user" && kind !== "app" && kind !== "service") throw new Error("kind claim missing");
  if (typeof sub !== "string") throw new Error("sub claim missing");
  // jose checked both are numbers; an iat in the future would stretch the lifetime past its cap.
  const [iat, exp] = [payload.iat, payload.exp] as number[];
  if (iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS) throw new Error("iat is in the future");
  const fault = tokenFault(kind, sub, exp - iat);
  if (fault) throw new Error(fault);
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  return {
    kind,
    sub,
    caps: strings(payload.caps),
    fp: payload.fp === true,
    app_id: text(payload.app_id),
    project_id: text(payload.project_id),
    env: text(payload.env),
    ns: strings(payload.ns),
    mod: text(payload.mod),
    aud: typeof payload.aud === "string" ? [payload.aud] : strings(payload.aud),
    exp,
  };
}
