import type { RdfFeed, RssFeed } from "feedsmith";
import type { FetchedEntry } from "../entry.js";
import { canonicalUrl, dateOf, fromCategories, ParseError, readFeed, squeeze, type Parser } from "./common.js";

/** An RSS 2.0 item or an RSS 1.0 (RDF) one, as feedsmith reads them. */
type Item = RssFeed.Item<string> & Pick<RdfFeed.Item<string>, "rdf">;

/** Stamped on every item this parser produced; raised when what it reads changes. */
export const PARSER_VERSION = "rss@1";

/**
 * RSS 2.0 (and 0.9x, and RSS 1.0's rdf:RDF items), read by feedsmith: an
 * item's link, else a permalink guid, else its `rdf:about`, is its URL (items
 * with none are skipped); `guid` its external id; `content:encoded`, else
 * `description`, its content; `pubDate`, else `dc:date`, its time;
 * `category domain="…"` its identifiers and filing type (common.ts).
 */
export const rss: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    const read = readFeed(body);
    if (read.format === "atom") throw new ParseError("not an RSS document: no rss/channel or rdf:RDF");
    const items: Item[] = read.feed.items ?? [];
    return items.flatMap((item) => entryOf(item, baseUrl));
  },
};

function entryOf(item: Item, baseUrl: string): FetchedEntry[] {
  const guid = item.guid?.value?.trim() ?? "";
  const permalink = item.guid?.isPermaLink !== false;
  const url =
    canonicalUrl(item.link, baseUrl) ??
    (permalink && /^https?:\/\//i.test(guid) ? canonicalUrl(guid, baseUrl) : undefined) ??
    canonicalUrl(item.rdf?.about, baseUrl);
  if (url === undefined) return [];
  const summary = squeeze(item.description ?? "");
  const content = squeeze(item.content?.encoded ?? "") || summary;
  const title = squeeze(item.title ?? "");
  const entry: FetchedEntry = {
    canonicalUrl: url,
    externalId: guid || undefined,
    title: title || url,
    summary: summary || undefined,
    content: content || title,
    publishedAt: dateOf(item.pubDate || item.dc?.dates?.[0]),
    identifiers: {},
  };
  const categories = (item.categories ?? []).map((category) => ({
    term: category.name?.trim() ?? "",
    kind: category.domain ?? "",
  }));
  fromCategories(categories, entry);
  return [entry];
}
