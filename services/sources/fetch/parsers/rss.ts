import type { FetchedEntry } from "../entry.js";
import {
  attributeOf,
  canonicalUrl,
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
export const PARSER_VERSION = "rss@1";

/**
 * RSS 2.0 (and 0.9x, and RSS 1.0's rdf:RDF items): an item's link, else a
 * permalink guid, is its URL (items with neither are skipped); `guid` its
 * external id; `content:encoded`, else `description`, its content;
 * `pubDate`, else `dc:date`, its time; `category domain="…"` its
 * identifiers and filing type (common.ts).
 */
export const rss: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    const document = parseXml(body);
    const channel = (document.rss as Node | undefined)?.channel as Node | undefined;
    const rdf = document["rdf:RDF"] as Node | undefined;
    if (!channel && !rdf) throw new ParseError("not an RSS document: no rss/channel or rdf:RDF");
    const items = list((channel?.item ?? rdf?.item) as Node | Node[] | undefined);
    return items.flatMap((item) => entryOf(item, baseUrl));
  },
};

function entryOf(item: Node, baseUrl: string): FetchedEntry[] {
  const guid = item.guid as Node | string | undefined;
  const guidText = textOf(guid);
  const permalink = attributeOf(guid, "isPermaLink") !== "false";
  const url =
    canonicalUrl(textOf(list(item.link)[0]), baseUrl) ??
    (permalink && /^https?:\/\//i.test(guidText) ? canonicalUrl(guidText, baseUrl) : undefined) ??
    canonicalUrl(attributeOf(item, "rdf:about"), baseUrl);
  if (url === undefined) return [];
  const summary = squeeze(textOf(item.description));
  const content = squeeze(textOf(item["content:encoded"])) || summary;
  const title = squeeze(textOf(item.title));
  const entry: FetchedEntry = {
    canonicalUrl: url,
    externalId: guidText || undefined,
    title: title || url,
    summary: summary || undefined,
    content: content || title,
    publishedAt: dateOf(textOf(item.pubDate) || textOf(item["dc:date"])),
    identifiers: {},
  };
  const categories = list(item.category as Node | string | (Node | string)[] | undefined).map((category) => ({
    term: textOf(category),
    kind: attributeOf(category, "domain"),
  }));
  fromCategories(categories, entry);
  return [entry];
}
