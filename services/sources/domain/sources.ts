import { invalid, problem } from "../../kit/handler/problem.js";
import { maxLength } from "../../kit/handler/text.js";
import { requireUrl } from "../../kit/handler/urls.js";
import { credentialNameProblem } from "../fetch/fetch-source.js";

/** The kinds of source: manual, or fetched by one of the parsers. */
export const KINDS = ["manual", "rss", "atom", "json_feed", "html_page", "json_api"] as const;
export type Kind = (typeof KINDS)[number];
export type FetchedKind = Exclude<Kind, "manual">;

export const SCHEMES = ["bearer", "header", "basic"] as const;
export type Scheme = (typeof SCHEMES)[number];

/** A source key: immutable, so every item's provenance can name it for ever. */
const KEY = /^[a-z0-9][a-z0-9._-]{1,63}$/;
/** An HTTP header name (RFC 9110 token), for the header credential scheme. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;

export const INTERVAL_DEFAULT_S = 3600;
const INTERVAL_MIN_S = 60;
const INTERVAL_MAX_S = 7 * 24 * 3600;
/** A source is stale once its last success is older than this many fetch intervals. */
export const STALE_INTERVALS = 3;

export const isFetched = (kind: Kind): kind is FetchedKind => kind !== "manual";

/** 400 naming `field` (the path's `key`, or a filter's `source_key`) unless it is a well-formed source key. */
export function requireKey(key: string, field = "key"): string {
  if (!KEY.test(key)) throw invalid(field, `${field} must match [a-z0-9][a-z0-9._-]{1,63}.`);
  return key;
}

/** A fetched source's URL: http or https, absolute, without user or password (credentials go by variable name). */
export function requireSourceUrl(value: string): URL {
  const url = requireUrl("url", value, ["https", "http"]);
  if (url.username !== "" || url.password !== "")
    throw invalid("url", "url must not carry a user or password: use a credential variable.");
  return url;
}

/** The per-host politeness key of a URL: its host and port, lower case. */
export const hostOf = (url: URL): string => url.host.toLowerCase();

/** 60 s to a week. */
export function requireInterval(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < INTERVAL_MIN_S || seconds > INTERVAL_MAX_S)
    throw invalid("fetch_interval_seconds", `fetch_interval_seconds must be ${INTERVAL_MIN_S} to ${INTERVAL_MAX_S}.`);
  return seconds;
}

/** A credential by variable name: the name is limited to PF_SOURCE_CRED_*, so no platform secret can be aimed anywhere. */
export function requireCredential(variable: string, scheme: Scheme | undefined, header: string) {
  const why = credentialNameProblem(variable);
  if (why !== undefined) throw invalid("credential", `credential.variable ${why}`);
  if (scheme === undefined) throw invalid("credential", "credential.scheme is required: bearer, header or basic.");
  if (scheme === "header" ? !HEADER_NAME.test(header) : header !== "")
    throw invalid("credential", "credential.header names the header for the header scheme, and only for it.");
  return { variable, scheme, header: scheme === "header" ? header : null };
}

/** A note (terms or robots): at most 2000 characters, trimmed. */
export const noteOf = (field: string, value: string): string => maxLength(field, value, 2000).trim();

/**
 * The enable gate, checked on every path that leaves a source enabled: a terms note always, and a robots note for
 * fetched kinds.
 */
export function checkEnableGate(source: { kind: Kind; enabled: boolean; termsNote: string; robotsNote: string }) {
  if (!source.enabled) return;
  if (source.termsNote === "")
    throw problem(409, "source.terms_note_required", "An enabled source needs a terms note.");
  if (isFetched(source.kind) && source.robotsNote === "")
    throw problem(409, "source.robots_note_required", "An enabled fetched source needs a robots note.");
}

/** How current a source's items are, as of `now`: computed on read. */
export type Staleness = "fresh" | "stale" | "never_fetched" | "not_applicable";

export function stalenessOf(
  source: { kind: Kind; lastSuccessAt: Date | null; fetchIntervalSeconds: number },
  now: Date,
): { staleness: Staleness; staleAfter?: Date } {
  if (!isFetched(source.kind)) return { staleness: "not_applicable" };
  if (source.lastSuccessAt === null) return { staleness: "never_fetched" };
  const staleAfter = new Date(source.lastSuccessAt.getTime() + STALE_INTERVALS * source.fetchIntervalSeconds * 1000);
  return { staleness: now > staleAfter ? "stale" : "fresh", staleAfter };
}
