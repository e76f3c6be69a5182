import type { FetchedEntry } from "../entry.js";
import { canonicalUrl, cikOf, dateOf, ParseError, squeeze, type Parser } from "./common.js";
import { parseJson, stringOf } from "./json.js";

/** Stamped on every item this parser produced; raised when what it reads changes. */
export const PARSER_VERSION = "json_feed@1";

/**
 * JSON Feed 1 and 1.1 (https://jsonfeed.org/version/1.1): an item's `url`,
 * else `external_url`, else an `id` that is a URL, is its URL (items with none
 * are skipped); `id` its external id; `content_html`, else `content_text`,
 * else `summary`, its content; `date_published`, else `date_modified`, its
 * time; extension members `_cik`, `_ticker`, `_filing_type` (JSON Feed's
 * custom-field convention) its identifiers and filing type.
 */
export const jsonFeed: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    const feed = parseJson(body);
    if (typeof feed !== "object" || feed === null || !Array.isArray((feed as { items?: unknown }).items))
      throw new ParseError("not a JSON Feed: no items array");
    const version = stringOf((feed as { version?: unknown }).version);
    if (!version?.startsWith("https://jsonfeed.org/version/")) throw new ParseError("not a JSON Feed: no version URL");
    return ((feed as { items: unknown[] }).items as Record<string, unknown>[]).flatMap((item) =>
      entryOf(item, baseUrl),
    );
  },
};

function entryOf(item: Record<string, unknown>, baseUrl: string): FetchedEntry[] {
  if (typeof item !== "object" || item === null) return [];
  const id = stringOf(item.id);
  const url =
    canonicalUrl(stringOf(item.url), baseUrl) ??
    canonicalUrl(stringOf(item.external_url), baseUrl) ??
    (id && /^https?:\/\//i.test(id) ? canonicalUrl(id, baseUrl) : undefined);
  if (url === undefined) return [];
  const title = squeeze(stringOf(item.title) ?? "");
  const summary = squeeze(stringOf(item.summary) ?? "");
  const content = (stringOf(item.content_html) ?? stringOf(item.content_text) ?? "").trim() || summary;
  const entry: FetchedEntry = {
    canonicalUrl: url,
    externalId: id,
    title: title || url,
    summary: summary || undefined,
    content: content || title,
    publishedAt: dateOf(stringOf(item.date_published) ?? stringOf(item.date_modified)),
    identifiers: {},
  };
  const cik = cikOf(stringOf(item._cik));
  const ticker = stringOf(item._ticker);
  const filingType = stringOf(item._filing_type);
  if (cik) entry.identifiers.cik = cik;
  if (ticker) entry.identifiers.ticker = ticker.toUpperCase();
  if (filingType) entry.filingType = filingType.toUpperCase();
  return [entry];
}
