import { Feed } from "feed";

/**
 * One feed renderer (README "Feeds"): RSS 2.0, Atom 1.0 and JSON Feed 1.1
 * from one typed model. RSS and Atom are written by the `feed` package;
 * JSON Feed here, because `feed` 6.0.0 writes version 1 and 1.1 is a plain
 * JSON object. What the model holds is public: the caller puts in only what
 * an anonymous reader may see.
 */
export interface FeedItem {
  /** Stable and unique in the feed (the object's id or its permanent URL). */
  id: string;
  /** Plain text (not HTML). */
  title: string;
  /** Absolute http(s) URL of the item's page. */
  link: string;
  /** When it was published. */
  date: Date;
  /** When it last changed (Atom's `updated`, JSON Feed's `date_modified`); `date` when unset. */
  updated?: Date;
  /** Plain text (see `excerpt` in kit/rich-text). */
  summary?: string;
  /** HTML from `renderMarkdown` only. */
  contentHtml?: string;
  /** The author's display name (an AI author's label for AI content). */
  author?: string;
  categories?: string[];
}

export interface FeedModel {
  title: string;
  description?: string;
  /** Absolute URL of the page the feed follows. */
  siteLink: string;
  /** Absolute URL of the feed itself (RSS atom:link self, Atom self, JSON feed_url). */
  feedLink: string;
  language?: string;
  /** When the feed last changed; the newest item's date when unset (never "now": the ETag must not change by itself). */
  updated?: Date;
  items: FeedItem[];
}

export type FeedFormat = "rss" | "atom" | "json";

export const FEED_CONTENT_TYPES: Record<FeedFormat, string> = {
  rss: "application/rss+xml; charset=utf-8",
  atom: "application/atom+xml; charset=utf-8",
  json: "application/feed+json; charset=utf-8",
};

/** A feed document: its bytes as text and its content type. */
export interface RenderedFeed {
  contentType: string;
  body: string;
}

/** Renders the model in one format. Links that are not absolute http(s) URLs are a bug of the caller (thrown). */
export function renderFeed(model: FeedModel, format: FeedFormat): RenderedFeed {
  for (const link of [model.siteLink, model.feedLink, ...model.items.map((item) => item.link)]) absolute(link);
  const body = format === "json" ? jsonFeed(model) : xmlFeed(model, format);
  return { contentType: FEED_CONTENT_TYPES[format], body };
}

function xmlFeed(model: FeedModel, format: "rss" | "atom"): string {
  const text = xmlText;
  const feed = new Feed({
    id: model.siteLink,
    title: text(model.title),
    description: text(model.description ?? ""),
    link: model.siteLink,
    feed: model.feedLink,
    feedLinks: { [format]: model.feedLink },
    language: model.language,
    updated: lastChange(model),
    generator: false,
    // Atom needs an author for entries without one.
    author: { name: text(model.title) },
    copyright: "",
  });
  for (const item of model.items) {
    // Titles and summaries go as escaped text in both: Atom's are type="html", and RSS readers take a title as HTML
    // (a raw "<" would be markup to them, and a second "]]>" would end the CDATA the package writes: broken XML).
    const title = escapeHtml(text(item.title));
    const summary = item.summary === undefined ? undefined : escapeHtml(text(item.summary));
    const content = item.contentHtml !== undefined ? text(item.contentHtml) : summary && `<p>${summary}</p>`;
    feed.addItem({
      // Atom ids are IRIs: a bare id goes as a URN.
      id: format === "atom" && !URL.canParse(item.id) ? `urn:pf:${item.id}` : item.id,
      title,
      link: item.link,
      date: item.updated ?? item.date,
      published: item.date,
      description: summary,
      content,
      author: item.author === undefined ? undefined : [{ name: text(item.author) }],
      category: item.categories?.map((name) => ({ name: text(name) })),
      // RSS 2.0's author element must be an e-mail address: the name goes as dc:creator.
      extensions:
        format === "rss" && item.author !== undefined
          ? [{ name: "dc:creator", objects: { _text: text(item.author) } }]
          : undefined,
    });
  }
  const xml = format === "rss" ? feed.rss2() : feed.atom1();
  // RSS names are carried as dc:creator, never a bare name in <author>.
  return format === "rss" ? xml.replace(/\n\s*<author>[^<]*<\/author>/g, "") : xml;
}

function jsonFeed(model: FeedModel): string {
  return JSON.stringify({
    version: "https://jsonfeed.org/version/1.1",
    title: model.title,
    home_page_url: model.siteLink,
    feed_url: model.feedLink,
    ...(model.description ? { description: model.description } : {}),
    ...(model.language ? { language: model.language } : {}),
    items: model.items.map((item) => ({
      id: item.id,
      url: item.link,
      title: item.title,
      ...(item.summary !== undefined ? { summary: item.summary } : {}),
      ...(item.contentHtml !== undefined ? { content_html: item.contentHtml } : { content_text: item.summary ?? "" }),
      date_published: item.date.toISOString(),
      ...(item.updated ? { date_modified: item.updated.toISOString() } : {}),
      ...(item.author !== undefined ? { authors: [{ name: item.author }] } : {}),
      ...(item.categories?.length ? { tags: item.categories } : {}),
    })),
  });
}

function lastChange(model: FeedModel): Date {
  if (model.updated) return model.updated;
  const times = model.items.map((item) => (item.updated ?? item.date).getTime());
  return new Date(times.length > 0 ? Math.max(...times) : 0);
}

function absolute(link: string): void {
  const url = URL.canParse(link) ? new URL(link) : undefined;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
    throw new Error(`a feed link must be an absolute http(s) URL: ${link}`);
}

/** Characters XML 1.0 forbids (C0 controls but tab, newline and return; U+FFFE, U+FFFF; lone surrogates): dropped. */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- control characters are what is dropped
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function xmlText(value: string): string {
  return value.replace(NOT_XML, "");
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
