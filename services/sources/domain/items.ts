import { createHash } from "node:crypto";
import { invalid, problem } from "../../kit/handler/problem.js";
import { maxLength } from "../../kit/handler/text.js";
import { requireUrl, URL_MAX } from "../../kit/handler/urls.js";
import type { FetchedEntry } from "../fetch/entry.js";

/** What a source says of one item, from a parser or a person. */
export interface Entry {
  canonicalUrl: string;
  externalId: string;
  title: string;
  summary: string;
  content: string;
  publishedAt: Date | null;
  identifiers: Record<string, string>;
  filingType: string;
  evidenceUrl: string;
}

/** How an item was retrieved: the provenance every revision keeps. */
export interface Retrieval {
  retrievedAt: Date;
  rawBodyHash: string;
  parserVersion: string;
  terms: string;
}

/** The parser version of items entered by hand. */
export const MANUAL_PARSER = "manual";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The content hash: what makes a new revision. Title, summary, content, published time, identifiers and filing type,
 * in a fixed order; the retrieval (time, body, parser) is not content.
 */
export function contentHashOf(entry: Entry): string {
  const identifiers = Object.keys(entry.identifiers)
    .sort()
    .map((key) => [key, entry.identifiers[key]]);
  return sha256(
    JSON.stringify([
      entry.title,
      entry.summary,
      entry.content,
      entry.publishedAt?.toISOString() ?? null,
      identifiers,
      entry.filingType,
    ]),
  );
}

/** sha256 of a body or a request item, as text. */
export const rawHashOf = (raw: string): string => sha256(raw);

/** An item's identity within its source: its external id when it has one, else its canonical URL. */
export const identityOf = (entry: Pick<Entry, "externalId" | "canonicalUrl">): string =>
  entry.externalId !== "" ? `id:${entry.externalId}` : `url:${entry.canonicalUrl}`;

/** A canonical URL: without its fragment, host lower-cased (URL does that). */
export function canonicalUrlOf(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = "";
  return copy.href;
}

const IDENTIFIER_KEY = /^[a-z0-9_]{1,32}$/;
/** The longest external id an item is identified by. */
const EXTERNAL_ID_MAX = 200;

/** A manual item as a person sends it; 422 item.evidence_url_required without its evidence URL, 400 naming a bad field. */
export function manualEntry(
  at: string,
  input: {
    evidenceUrl: string;
    canonicalUrl: string;
    externalId: string;
    title: string;
    summary: string;
    content: string;
    publishedAt: Date | undefined;
    identifiers: Record<string, string>;
    filingType: string;
  },
): Entry {
  if (input.evidenceUrl === "")
    throw problem(422, "item.evidence_url_required", `${at}.evidence_url is required: manual items need evidence.`);
  const evidence = requireUrl(`${at}.evidence_url`, input.evidenceUrl, ["https", "http"]);
  const canonical =
    input.canonicalUrl === "" ? evidence : requireUrl(`${at}.canonical_url`, input.canonicalUrl, ["https", "http"]);
  const title = maxLength(`${at}.title`, input.title.trim(), 500);
  if (title === "") throw invalid(`${at}.title`, `${at}.title is required.`);
  const identifiers = Object.entries(input.identifiers);
  if (identifiers.length > 20) throw invalid(`${at}.identifiers`, "At most 20 identifiers.");
  for (const [key, value] of identifiers) {
    if (!IDENTIFIER_KEY.test(key) || value === "" || value.length > 200)
      throw invalid(`${at}.identifiers`, "Identifier keys are [a-z0-9_]{1,32}, values 1 to 200 characters.");
  }
  // Percent-encoding can lengthen a URL: the identity is what must fit.
  const canonicalUrl = canonicalUrlOf(canonical);
  if (canonicalUrl.length > URL_MAX) {
    const field = input.canonicalUrl === "" ? `${at}.evidence_url` : `${at}.canonical_url`;
    throw invalid(field, `${field} is longer than ${URL_MAX} characters once percent-encoded.`);
  }
  return {
    canonicalUrl,
    externalId: maxLength(`${at}.external_id`, input.externalId, EXTERNAL_ID_MAX),
    title,
    summary: maxLength(`${at}.summary`, input.summary, 5000),
    content: maxLength(`${at}.content`, input.content, 200_000),
    publishedAt: input.publishedAt ?? null,
    identifiers: Object.fromEntries(identifiers),
    filingType: maxLength(`${at}.filing_type`, input.filingType, 32),
    evidenceUrl: evidence.href,
  };
}

/** Text as Postgres stores it: without NUL, which a JSON body may carry (`\u0000`) and no text column takes. */
export const storable = (text: string): string => text.replaceAll("\u0000", "");

/** A stated time Postgres can hold (years 1 to 9999, as RFC 3339 writes them); null, as unstated, otherwise. */
function storableDate(date: Date | undefined): Date | null {
  if (date === undefined || Number.isNaN(date.getTime())) return null;
  const year = date.getUTCFullYear();
  return year >= 1 && year <= 9999 ? date : null;
}

/**
 * A parser's entry as an item entry, or undefined when it cannot be identified: a canonical URL that is not a URL
 * or is longer than a URL a service takes, or an external id over 200 characters. Such an entry is left out of
 * the run's items rather than failing the whole run (an identity that long cannot be indexed).
 */
export function entryOfFetched(fetched: FetchedEntry): Entry | undefined {
  const externalId = storable(fetched.externalId ?? "");
  if (!URL.canParse(fetched.canonicalUrl) || externalId.length > EXTERNAL_ID_MAX) return undefined;
  const canonicalUrl = canonicalUrlOf(new URL(fetched.canonicalUrl));
  if (canonicalUrl.length > URL_MAX) return undefined;
  return {
    canonicalUrl,
    externalId,
    title: storable(fetched.title),
    summary: storable(fetched.summary ?? ""),
    content: storable(fetched.content),
    publishedAt: storableDate(fetched.publishedAt),
    identifiers: Object.fromEntries(
      Object.entries(fetched.identifiers).map(([key, value]) => [storable(key), storable(value)]),
    ),
    filingType: storable(fetched.filingType ?? ""),
    evidenceUrl: "",
  };
}
