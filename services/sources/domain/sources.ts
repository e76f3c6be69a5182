import { invalid, problem } from "../../kit/handler/problem.js";
import { requireUrl } from "../../kit/handler/urls.js";

/** The kinds of source: manual, or fetched by one of the parsers. */
export const KINDS = ["manual", "rss", "atom", "json_feed", "html_page", "json_api"] as const;
export type Kind = (typeof KINDS)[number];
export type FetchedKind = Exclude<Kind, "manual">;

export const SCHEMES = ["bearer", "header", "basic"] as const;
export type Scheme = (typeof SCHEMES)[number];

export const INTERVAL_DEFAULT_S = 3600;
/** A source is stale once its last success is older than this many fetch intervals. */
export const STALE_INTERVALS = 3;

export const isFetched = (kind: Kind): kind is FetchedKind => kind !== "manual";

/** A fetched source's URL: http or https, absolute, without user or password (credentials go by variable name). */
export function requireSourceUrl(value: string): URL {
  const url = requireUrl("url", value, ["https", "http"]);
  if (url.username !== "" || url.password !== "")
    throw invalid("url", "url must not carry a user or password: use a credential variable.");
  return url;
}

/** The per-host politeness key of a URL: its host and port, lower case. */
export const hostOf = (url: URL): string => url.host.toLowerCase();

/**
 * A credential by variable name, once not every field is empty (a removal): the contract holds the variable to
 * PF_SOURCE_CRED_* and the header to an HTTP token; what is left is which fields go together.
 */
export function requireCredential(variable: string, scheme: Scheme | undefined, header: string) {
  if (variable === "") throw invalid("credential.variable", "credential.variable is required: PF_SOURCE_CRED_….");
  if (scheme === undefined)
    throw invalid("credential.scheme", "credential.scheme is required: bearer, header or basic.");
  if (scheme === "header" ? header === "" : header !== "")
    throw invalid("credential.header", "credential.header names the header for the header scheme, and only for it.");
  return { variable, scheme, header: scheme === "header" ? header : null };
}

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
