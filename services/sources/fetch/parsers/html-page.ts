import { Parser as HtmlParser } from "htmlparser2";
import type { FetchedEntry } from "../entry.js";
import { canonicalUrl, dateOf, ParseError, squeeze, type Parser } from "./common.js";

/** Elements whose text a reader never sees. */
const HIDDEN = new Set(["script", "style", "noscript", "template", "svg", "head"]);

/** Stamped on every item this parser produced; raised when what it reads changes. */
export const PARSER_VERSION = "html_page@1";

/**
 * One HTML page is one entry: its `link rel="canonical"`, else `og:url`, else
 * the URL it was fetched from (after redirects) is its URL; `<title>`, else
 * `og:title`, else the first `h1`, its title; the visible text (scripts,
 * styles and the head left out, whitespace collapsed) its content; the meta
 * description its summary; `article:published_time`, else the first
 * `<time datetime>`, its time. htmlparser2 forgives almost anything, so a body
 * is refused as not HTML when it holds a NUL or no element at all.
 */
export const htmlPage: Parser = {
  version: PARSER_VERSION,
  parse(body, baseUrl) {
    if (body.includes("\0")) throw new ParseError("not HTML: the body holds NUL bytes");
    const page = read(body);
    if (page.elements === 0) throw new ParseError("not HTML: no element");
    const url =
      canonicalUrl(page.canonical, baseUrl) ??
      canonicalUrl(page.meta["og:url"], baseUrl) ??
      canonicalUrl(baseUrl, baseUrl);
    if (url === undefined) throw new ParseError("the page has no http(s) URL");
    const title = squeeze(page.title) || squeeze(page.meta["og:title"] ?? "") || squeeze(page.h1);
    const summary = squeeze(page.meta.description ?? page.meta["og:description"] ?? "");
    const entry: FetchedEntry = {
      canonicalUrl: url,
      title: title || url,
      summary: summary || undefined,
      content: squeeze(page.text.join(" ")) || title,
      publishedAt: dateOf(page.meta["article:published_time"] ?? page.time),
      identifiers: {},
    };
    return [entry];
  },
};

interface Page {
  elements: number;
  title: string;
  /** The first h1's text, and how many were opened. */
  h1: string;
  h1s: number;
  text: string[];
  meta: Record<string, string>;
  canonical?: string;
  time?: string;
}

function read(body: string): Page {
  const page: Page = { elements: 0, title: "", h1: "", h1s: 0, text: [], meta: {} };
  const open: string[] = [];
  let hidden = 0;
  const parser = new HtmlParser(
    {
      onopentag(name, attributes) {
        page.elements++;
        open.push(name);
        if (HIDDEN.has(name)) hidden++;
        if (name === "h1") page.h1s++;
        if (name === "meta") {
          const key = (attributes.property ?? attributes.name ?? "").toLowerCase();
          if (key && attributes.content !== undefined) page.meta[key] ??= attributes.content;
        }
        if (name === "link" && (attributes.rel ?? "").toLowerCase().split(/\s+/).includes("canonical"))
          page.canonical ??= attributes.href;
        if (name === "time" && attributes.datetime) page.time ??= attributes.datetime;
      },
      ontext(text) {
        const current = open.at(-1);
        if (current === "title") page.title += text;
        else if (page.h1s === 1 && open.includes("h1")) page.h1 += text;
        if (hidden === 0) page.text.push(text);
      },
      onclosetag(name) {
        const at = open.lastIndexOf(name);
        if (at < 0) return;
        for (const closed of open.splice(at)) if (HIDDEN.has(closed)) hidden--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(body);
  return page;
}
