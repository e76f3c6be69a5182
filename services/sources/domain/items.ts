import { createHash } from "node:crypto";
import { invalid, problem } from "../../kit/handler/problem.js";
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

/**
 * The most each field of an item holds, manual or fetched: the contract declares the same caps on a manual item's
 * fields (`ManualItemInput`; its external id, as any id others make, at most 128), so one over them is 400 naming
 * it; a fetched entry over one is left out of its run (counted). The external id is part of the identity, which a
 * btree indexes; the title travels in every item event, which must stay far below the outbox's 512 KiB.
 */
export const ITEM_CAPS = {
  title: 500,
  summary: 5000,
  content: 200_000,
  externalId: 200,
  filingType: 32,
  identifiers: 20,
  identifierValue: 200,
} as const;

/**
 * A manual item as a person sends it, its lengths held by the contract: 422 item.evidence_url_required without its
 * evidence URL, 400 naming a URL that is none or a bad identifier.
 */
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
  const identifiers = Object.entries(input.identifiers);
  if (identifiers.length > ITEM_CAPS.identifiers)
    throw invalid(`${at}.identifiers`, `At most ${ITEM_CAPS.identifiers} identifiers.`);
  for (const [key, value] of identifiers) {
    if (!IDENTIFIER_KEY.test(key) || value === "" || value.length > ITEM_CAPS.identifierValue)
      throw invalid(
        `${at}.identifiers`,
        `Identifier keys are [a-z0-9_]{1,32}, values 1 to ${ITEM_CAPS.identifierValue} characters.`,
      );
  }
  // Percent-encoding can lengthen a URL: the identity is what must fit.
  const canonicalUrl = canonicalUrlOf(canonical);
  if (canonicalUrl.length > URL_MAX) {
    const field = input.canonicalUrl === "" ? `${at}.evidence_url` : `${at}.canonical_url`;
    throw invalid(field, `${field} is longer than ${URL_MAX} characters once percent-encoded.`);
  }
  return {
    canonicalUrl,
    externalId: input.externalId,
    title: input.title.trim(),
    summary: input.summary,
    content: input.content,
    publishedAt: input.publishedAt ?? null,
    identifiers: Object.fromEntries(identifiers),
    filingType: input.filingType,
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
 * A parser's entry as an item entry, or undefined when it is left out: it cannot be identified (a canonical URL that
 * is not a URL or is longer than a URL a service takes) or a field is over its cap (`ITEM_CAPS`). Such an entry is
 * left out of the run's items and counted, never failing the whole run: one oversized entry must not stop its
 * source (a 3.5 MB title would make an item event the outbox refuses).
 */
export function entryOfFetched(fetched: FetchedEntry): Entry | undefined {
  if (!URL.canParse(fetched.canonicalUrl)) return undefined;
  const canonicalUrl = canonicalUrlOf(new URL(fetched.canonicalUrl));
  const identifiers = Object.entries(fetched.identifiers).map(([key, value]) => [storable(key), storable(value)]);
  const entry: Entry = {
    canonicalUrl,
    externalId: storable(fetched.externalId ?? ""),
    title: storable(fetched.title),
    summary: storable(fetched.summary ?? ""),
    content: storable(fetched.content),
    publishedAt: storableDate(fetched.publishedAt),
    identifiers: Object.fromEntries(identifiers),
    filingType: storable(fetched.filingType ?? ""),
    evidenceUrl: "",
  };
  const over =
    canonicalUrl.length > URL_MAX ||
    entry.externalId.length > ITEM_CAPS.externalId ||
    entry.title.length > ITEM_CAPS.title ||
    entry.summary.length > ITEM_CAPS.summary ||
    entry.content.length > ITEM_CAPS.content ||
    entry.filingType.length > ITEM_CAPS.filingType ||
    identifiers.length > ITEM_CAPS.identifiers ||
    identifiers.some(([, value]) => value.length > ITEM_CAPS.identifierValue);
  return over ? undefined : entry;
}
