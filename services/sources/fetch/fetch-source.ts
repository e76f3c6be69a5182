import { createHash } from "node:crypto";
import {
  fetchOutbound,
  OutboundError,
  type OutboundFailure,
  type OutboundResponse,
  type OutboundSettings,
} from "../../kit/outbound/fetch.js";
import type { FetchedEntry } from "./entry.js";
import { credentialHeaders, type CredentialReference } from "./credentials.js";
import { atom } from "./parsers/atom.js";
import { ParseError, type Parser } from "./parsers/common.js";
import { htmlPage } from "./parsers/html-page.js";
import { jsonApi } from "./parsers/json-api.js";
import { jsonFeed } from "./parsers/json-feed.js";
import { rss } from "./parsers/rss.js";
import { robotsAllow } from "./robots.js";

export type SourceKind = "rss" | "atom" | "json_feed" | "html_page" | "json_api";
export type FailureClass =
  | "dns"
  | "refused_address"
  | "connect"
  | "timeout"
  | "http_status"
  | "too_large"
  | "parse_error"
  | "robots_disallowed"
  | "credential_missing"
  | "abandoned";

export interface FetchTarget {
  kind: SourceKind;
  url: string;
  credential?: CredentialReference;
  etag?: string;
  lastModified?: string;
}

export type { FetchedEntry };

export type FetchOutcome =
  | {
      state: "succeeded";
      httpStatus: number;
      bytes: number;
      etag?: string;
      lastModified?: string;
      rawBodyHash: string;
      parserVersion: string;
      entries: FetchedEntry[];
    }
  | { state: "not_modified"; httpStatus: 304 }
  | { state: "failed"; failureClass: FailureClass; httpStatus?: number; detail: string };

export { CREDENTIAL_PREFIX, credentialNameProblem } from "./credentials.js";

const PARSERS: Record<SourceKind, Parser> = { rss, atom, json_feed: jsonFeed, html_page: htmlPage, json_api: jsonApi };

const ACCEPT: Record<SourceKind, string> = {
  rss: "application/rss+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1",
  atom: "application/atom+xml, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1",
  json_feed: "application/feed+json, application/json;q=0.9, */*;q=0.1",
  html_page: "text/html, application/xhtml+xml;q=0.9, */*;q=0.1",
  json_api: "application/json, */*;q=0.1",
};

/** The run's failure class for each failure of the outbound client (the client's finer words stay in `detail`). */
const FAILURE_CLASS: Record<OutboundFailure, FailureClass> = {
  invalid_url: "refused_address", // a scheme other than http(s) or a user name, in the URL or a redirect
  refused_address: "refused_address",
  dns: "dns",
  connect: "connect",
  timeout: "timeout",
  too_large: "too_large",
  too_many_redirects: "http_status",
  protocol: "connect", // the exchange broke: a malformed answer, or the connection dropped mid-body
};

/**
 * Fetches one source once: its credential read from `env` now, robots.txt of
 * its origin honoured, a conditional GET when the last run left an ETag or a
 * Last-Modified, the body parsed by its kind's parser. Every fault of the
 * source answers `failed` with its class, never a throw; the credential's
 * value is in no detail. The item's content hash is the service's to compute
 * from `content`; `rawBodyHash` is sha256 (hex) of the decompressed body and
 * `bytes` its length.
 */
export async function fetchSource(
  target: FetchTarget,
  env: Readonly<Record<string, string | undefined>>,
  settings: OutboundSettings,
): Promise<FetchOutcome> {
  let credentials: Record<string, string> = {};
  if (target.credential) {
    const found = credentialHeaders(target.credential, env);
    if ("missing" in found) return failed("credential_missing", found.missing);
    credentials = found.headers;
  }
  if (!URL.canParse(target.url)) return failed("refused_address", "the source's URL is not an absolute URL");
  try {
    if (!(await robotsAllow(target.url, settings)))
      return failed(
        "robots_disallowed",
        `robots.txt of ${new URL(target.url).origin} disallows this URL for the platform`,
      );
    const headers: Record<string, string> = { accept: ACCEPT[target.kind] };
    if (target.etag) headers["if-none-match"] = target.etag;
    if (target.lastModified) headers["if-modified-since"] = target.lastModified;
    const answer = await fetchOutbound({ url: target.url, headers, credentialHeaders: credentials }, settings);
    if (answer.status === 304) return { state: "not_modified", httpStatus: 304 };
    if (answer.status < 200 || answer.status >= 300)
      return { ...failed("http_status", `the source answered ${answer.status}`), httpStatus: answer.status };
    return parsed(target.kind, answer);
  } catch (error) {
    if (error instanceof OutboundError) return failed(FAILURE_CLASS[error.failure], error.message);
    throw error; // a bug of ours, not the source's fault
  }
}

function parsed(kind: SourceKind, answer: OutboundResponse): FetchOutcome {
  const parser = PARSERS[kind];
  let entries: FetchedEntry[];
  try {
    entries = parser.parse(decoded(answer.body, answer.headers["content-type"]), answer.url);
  } catch (error) {
    const detail = error instanceof ParseError ? error.message : `unreadable ${kind}: ${(error as Error).message}`;
    return { ...failed("parse_error", detail), httpStatus: answer.status };
  }
  return {
    state: "succeeded",
    httpStatus: answer.status,
    bytes: answer.body.length,
    etag: answer.headers.etag,
    lastModified: answer.headers["last-modified"],
    rawBodyHash: createHash("sha256").update(answer.body).digest("hex"),
    parserVersion: parser.version,
    entries,
  };
}

/** The body as text in the charset Content-Type names (UTF-8 when it names none or one unknown). */
function decoded(body: Buffer, contentType: string | undefined): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? "")?.[1] ?? "utf-8";
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

function failed(failureClass: FailureClass, detail: string): FetchOutcome & { state: "failed" } {
  return { state: "failed", failureClass, detail };
}
