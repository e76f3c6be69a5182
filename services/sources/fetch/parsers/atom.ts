import type { FetchedEntry } from "../entry.js";
import {
  attributeOf,
  canonicalUrl,
  cikOf,
  dateOf,
  fromCategories,
  list,
  ParseError,
  parseXml,
  squeeze,
  textOf,
  type Parser,
} from "./common.js";

type Node = Record<string, unknown>;

/** Stamped on every item this parser produced; raised when what it reads changes. */
export const PARSER_VERSION = "atom@1";

/**
 * Atom 1.0: an entry's `link rel="alternate"` (or a link without rel) is its
 * URL (entries without one are skipped), `id` its external id, `content`,
 * else `summary`, its content, `published`, else `updated`, its time,
 * `category` (term, scheme, label) its identifiers and filing type.
 *
 * SEC EDGAR's feeds are Atom, and what they carry is read where it is: the
 * company feed's `company-info/cik` for every entry; an entry's
 * `category label="form type"` and its `content`'s `filing-type` as the
 * filing type, its `accession-number` (or `accession-nunber`, as EDGAR spells
 * it in places) as `accession_number`; a link to `/Archives/edgar/data/<cik>/`
 * or a title "… (0000320193) …" (the current-filings feed) as the CIK.
 */
export const atom: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    const feed = parseXml(body).feed as Node | undefined;
    if (!feed) throw new ParseError("not an Atom document: no feed element");
    const companyCik = cikOf(textOf((feed["company-info"] as Node | undefined)?.cik));
    return list(feed.entry as Node | Node[] | undefined).flatMap((entry) => entryOf(entry, baseUrl, companyCik));
  },
};

function entryOf(node: Node, baseUrl: string, companyCik: string | undefined): FetchedEntry[] {
  const links = list(node.link as Node | Node[] | undefined);
  const alternate = links.find((link) => (attributeOf(link, "rel") || "alternate") === "alternate") ?? links[0];
  const url = canonicalUrl(attributeOf(alternate, "href"), baseUrl);
  if (url === undefined) return [];
  const title = squeeze(textOf(node.title));
  const summary = squeeze(textOf(node.summary));
  const contentNode = node.content as Node | string | undefined;
  const content = squeeze(textOf(contentNode)) || summary;
  const entry: FetchedEntry = {
    canonicalUrl: url,
    externalId: textOf(node.id) || undefined,
    title: title || url,
    summary: summary || undefined,
    content: content || title,
    publishedAt: dateOf(textOf(node.published) || textOf(node.updated)),
    identifiers: {},
  };
  const categories = list(node.category as Node | Node[] | undefined).map((category) => ({
    term: attributeOf(category, "term"),
    kind: `${attributeOf(category, "label")} ${attributeOf(category, "scheme")}`,
  }));
  fromCategories(categories, entry);
  edgar(entry, typeof contentNode === "object" ? contentNode : {}, companyCik);
  return [entry];
}

/** What SEC EDGAR's Atom entries carry besides Atom's own elements. */
function edgar(entry: FetchedEntry, content: Node, companyCik: string | undefined): void {
  const filingType = textOf(content["filing-type"]);
  if (filingType) entry.filingType ??= filingType.toUpperCase();
  const accession = textOf(content["accession-number"] ?? content["accession-nunber"]);
  if (accession) entry.identifiers.accession_number = accession;
  if (entry.identifiers.cik) return;
  const host = new URL(entry.canonicalUrl).hostname;
  const fromLink = /\/Archives\/edgar\/data\/(\d{1,10})\//.exec(entry.canonicalUrl)?.[1];
  const fromTitle = /\((\d{10})\)/.exec(entry.title)?.[1];
  const cik = companyCik ?? (host.endsWith("sec.gov") ? cikOf(fromLink ?? fromTitle) : undefined);
  if (cik) entry.identifiers.cik = cik;
}
