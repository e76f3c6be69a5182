import type { FetchedEntry } from "../entry.js";
import { canonicalUrl, cikOf, dateOf, ParseError, squeeze, type Parser } from "./common.js";
import { firstOf, parseJson, stableJson } from "./json.js";

/** Where an API keeps its list: the document itself, or the first of these members holding an array. */
const LISTS = ["items", "data", "results", "entries", "articles", "filings"];
const URLS = ["url", "link", "href", "canonical_url", "permalink"];
const IDS = ["id", "guid", "accession_number", "accessionNumber"];
const TITLES = ["title", "headline", "name"];
const SUMMARIES = ["summary", "description", "excerpt"];
const CONTENTS = ["content", "body", "text", "content_html", "content_text"];
const DATES = [
  "published_at",
  "publishedAt",
  "date_published",
  "date",
  "filed_at",
  "filingDate",
  "created_at",
  "updated_at",
];
const TICKERS = ["ticker", "symbol"];
const FILING_TYPES = ["filing_type", "filingType", "form_type", "formType", "form"];

/** Stamped on every item this parser produced; raised when what it reads changes. */
export const PARSER_VERSION = "json_api@1";

/**
 * A JSON API answering a list of objects (designed: the spec names no shape):
 * the document if it is an array, else its first member among `LISTS` holding
 * one. Each object's first member of `URLS` is its URL (objects without one
 * are skipped), of `IDS` its external id, of `TITLES`, `SUMMARIES`,
 * `CONTENTS` and `DATES` the rest; without a content member, the object itself
 * as JSON with sorted keys is the content, so any change to it is a revision.
 * `cik`, `ticker`/`symbol` and a filing type (`FILING_TYPES`) when present.
 */
export const jsonApi: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    const document = parseJson(body);
    const items = Array.isArray(document)
      ? document
      : typeof document === "object" && document !== null
        ? LISTS.map((name) => (document as Record<string, unknown>)[name]).find(Array.isArray)
        : undefined;
    if (!items) throw new ParseError(`no list of entries: an array, or a member ${LISTS.join(", ")} holding one`);
    return (items as unknown[]).flatMap((item) => entryOf(item, baseUrl));
  },
};

function entryOf(item: unknown, baseUrl: string): FetchedEntry[] {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return [];
  const object = item as Record<string, unknown>;
  const url = canonicalUrl(firstOf(object, URLS), baseUrl);
  if (url === undefined) return [];
  const title = squeeze(firstOf(object, TITLES) ?? "");
  const summary = squeeze(firstOf(object, SUMMARIES) ?? "");
  const entry: FetchedEntry = {
    canonicalUrl: url,
    externalId: firstOf(object, IDS),
    title: title || url,
    summary: summary || undefined,
    content: firstOf(object, CONTENTS) ?? stableJson(object),
    publishedAt: dateOf(firstOf(object, DATES)),
    identifiers: {},
  };
  const cik = cikOf(firstOf(object, ["cik"]));
  const ticker = firstOf(object, TICKERS);
  const filingType = firstOf(object, FILING_TYPES);
  if (cik) entry.identifiers.cik = cik;
  if (ticker) entry.identifiers.ticker = ticker.toUpperCase();
  if (filingType) entry.filingType = filingType.toUpperCase();
  return [entry];
}
