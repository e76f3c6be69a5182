import type { AtomFeed } from "feedsmith";
import type { FetchedEntry } from "../entry.js";
import {
  canonicalUrl,
  cikOf,
  dateOf,
  fromCategories,
  markupOf,
  ParseError,
  parseXml,
  readFeed,
  squeeze,
  textOf,
  type Parser,
} from "./common.js";

type Node = Record<string, unknown>;
type Entry = AtomFeed.Entry<string>;

/** Stamped on every item this parser produced; raised when what it reads changes. */
export const PARSER_VERSION = "atom@1";

/**
 * Atom 1.0, read by feedsmith: an entry's `link rel="alternate"` (or a link
 * without rel) is its URL (entries without one are skipped), `id` its
 * external id, `content`, else `summary`, its content, `published`, else
 * `updated`, its time, `category` (term, scheme, label) its identifiers and
 * filing type. A text given as markup (`xhtml`, an XML media type) is its text.
 *
 * SEC EDGAR's feeds are Atom, and what they carry is read where it is: the
 * company feed's `company-info/cik` for every entry; an entry's
 * `category label="form type"` and its `content`'s `filing-type` as the
 * filing type, its `accession-number` (or `accession-nunber`, as EDGAR spells
 * it in places) as `accession_number`; a link to `/Archives/edgar/data/<cik>/`
 * or a title "… (0000320193) …" (the current-filings feed) as the CIK.
 * EDGAR's own elements are in no namespace feedsmith reads: `company-info`
 * comes from the document as fast-xml-parser parses it (only when the feed has
 * one), the content's elements from the markup feedsmith hands back.
 */
export const atom: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    const read = readFeed(body);
    if (read.format !== "atom") throw new ParseError("not an Atom document: no feed element");
    const companyCik = body.includes("<company-info") ? companyCikOf(body) : undefined;
    return (read.feed.entries ?? []).flatMap((entry) => entryOf(entry, baseUrl, companyCik));
  },
};

function entryOf(entry: Entry, baseUrl: string, companyCik: string | undefined): FetchedEntry[] {
  const links = entry.links ?? [];
  const alternate = links.find((link) => (link.rel || "alternate") === "alternate") ?? links[0];
  const url = canonicalUrl(alternate?.href, baseUrl);
  if (url === undefined) return [];
  const title = squeeze(textOf(nodeOf(entry.title)));
  const summary = squeeze(textOf(nodeOf(entry.summary)));
  const contentNode = nodeOf(entry.content);
  const content = squeeze(textOf(contentNode)) || summary;
  const fetched: FetchedEntry = {
    canonicalUrl: url,
    externalId: entry.id?.trim() || undefined,
    title: title || url,
    summary: summary || undefined,
    content: content || title,
    publishedAt: dateOf(entry.published || entry.updated),
    identifiers: {},
  };
  const categories = (entry.categories ?? []).map((category) => ({
    term: category.term ?? "",
    kind: `${category.label ?? ""} ${category.scheme ?? ""}`,
  }));
  fromCategories(categories, fetched);
  edgar(fetched, typeof contentNode === "object" ? contentNode : {}, companyCik);
  return [fetched];
}

/** A text construct or content: markup (xhtml, an XML media type) as parsed nodes, anything else its text. */
function nodeOf(text: { value?: string; type?: string } | undefined): Node | string {
  const type = text?.type?.toLowerCase() ?? "text";
  const markup = type === "xhtml" || /[/+]xml$/.test(type);
  return markup ? markupOf(text?.value ?? "") : (text?.value ?? "");
}

/** The CIK of SEC's company feed, which names its company once in `company-info`. */
function companyCikOf(body: string): string | undefined {
  const feed = parseXml(body).feed as Node | undefined;
  return cikOf(textOf((feed?.["company-info"] as Node | undefined)?.cik));
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
