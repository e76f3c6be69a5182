import { XMLParser, XMLValidator } from "fast-xml-parser";
import { parseFeed, type AnyFeed } from "feedsmith";
import type { FetchedEntry } from "../entry.js";

/** A body that is not what its kind promises (bad XML, HTML or JSON): the run fails `parse_error`. */
export class ParseError extends Error {}

/** One parser: the body as text and the URL it came from (after redirects), to the entries it holds. */
export interface Parser {
  /** Stamped on every item it produced (`<kind>@<n>`): raised when what it reads changes. */
  version: string;
  parse(body: string, baseUrl: string): FetchedEntry[];
}

/**
 * An item's identity: absolute http(s), scheme and host lower-case, no
 * fragment, no default port (what URL does), relative links resolved against
 * the page they are on. Undefined for anything else (mailto:, javascript:, junk).
 */
export function canonicalUrl(href: string | undefined, baseUrl: string): string | undefined {
  if (href === undefined || href.trim() === "" || !URL.canParse(href.trim(), baseUrl)) return undefined;
  const url = new URL(href.trim(), baseUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  url.hash = "";
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.slice(0, -1);
  return url.href;
}

/** A date as stated (RFC 822 in RSS, ISO 8601 elsewhere); undefined when absent or unreadable. */
export function dateOf(value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const date = new Date(value.trim());
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** The text of a parsed XML node: its own text and its children's, attributes left out. */
export function textOf(node: unknown): string {
  if (node === undefined || node === null) return "";
  if (typeof node === "string" || typeof node === "number" || typeof node === "boolean") return String(node).trim();
  if (Array.isArray(node))
    return node
      .map(textOf)
      .filter((t) => t !== "")
      .join(" ");
  return Object.entries(node as Record<string, unknown>)
    .filter(([key]) => !key.startsWith("@_"))
    .map(([, value]) => textOf(value))
    .filter((t) => t !== "")
    .join(" ");
}

/** Whitespace collapsed, as an entry's text is compared and hashed. */
export function squeeze(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** A CIK as SEC writes it in full: 10 digits with leading zeros (trade's form); undefined for what is not one. */
export function cikOf(raw: string | undefined): string | undefined {
  const digits = (raw ?? "").trim().replace(/^CIK/i, "");
  return /^\d{1,10}$/.test(digits) ? digits.padStart(10, "0") : undefined;
}

/**
 * Identifiers and a filing type from an entry's categories (RSS `domain`,
 * Atom `scheme` and `label`): a category labelled form or filing type gives
 * the filing type (SEC EDGAR: label "form type", scheme sec.gov), one named
 * ticker or symbol a ticker, one named CIK a CIK.
 */
export function fromCategories(
  categories: { term: string; kind: string }[],
  into: Pick<FetchedEntry, "identifiers" | "filingType">,
): void {
  for (const { term, kind } of categories) {
    if (term === "") continue;
    if (/form[ _-]?type|filing[ _-]?type/i.test(kind)) into.filingType ??= term.toUpperCase();
    else if (/ticker|symbol/i.test(kind)) into.identifiers.ticker ??= term.toUpperCase();
    else if (/\bcik\b/i.test(kind)) {
      const cik = cikOf(term);
      if (cik) into.identifiers.cik ??= cik;
    }
  }
}

const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  textNodeName: "#text",
  parseTagValue: false, // CIKs keep their leading zeros, numbers stay as written
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true, // with the library's limits on entity count and expansion (no billion laughs)
});

/**
 * An RSS, RDF or Atom document, read by feedsmith from the body already
 * fetched (it fetches nothing). fast-xml-parser's validator decides first
 * whether the body is XML at all, so the detail names the line; feedsmith
 * expands no entity a DOCTYPE declares. ParseError for anything else.
 */
export function readFeed(body: string): Exclude<AnyFeed, { format: "json" }> {
  const valid = XMLValidator.validate(body);
  if (valid !== true) throw new ParseError(`invalid XML at line ${valid.err.line}: ${valid.err.msg}`);
  let read: AnyFeed;
  try {
    read = parseFeed(body);
  } catch (error) {
    throw new ParseError(`not a feed: ${(error as Error).message}`);
  }
  if (read.format === "json") throw new ParseError("not a feed: JSON");
  return read;
}

/** A well-formed XML document, parsed; ParseError naming the line otherwise. */
export function parseXml(body: string): Record<string, unknown> {
  const valid = XMLValidator.validate(body);
  if (valid !== true) throw new ParseError(`invalid XML at line ${valid.err.line}: ${valid.err.msg}`);
  try {
    return xml.parse(body) as Record<string, unknown>;
  } catch (error) {
    throw new ParseError(`invalid XML: ${(error as Error).message}`);
  }
}

/**
 * Markup a feed carries as text (Atom's xhtml and XML content, as feedsmith
 * hands it back), parsed leniently into nodes for `textOf`: it came inside a
 * document already validated, and a stray `&` feedsmith decoded must not
 * refuse the feed.
 */
export function markupOf(fragment: string): Record<string, unknown> {
  try {
    const parsed = xml.parse(`<markup>${fragment}</markup>`) as { markup?: unknown };
    return typeof parsed.markup === "object" && parsed.markup !== null
      ? (parsed.markup as Record<string, unknown>)
      : { "#text": textOf(parsed.markup) };
  } catch {
    return { "#text": fragment };
  }
}
