import type { HandlerContext } from "@connectrpc/connect";
import { answerStatus } from "../handler/status.js";
import { rangeOf } from "./ranges.js";
import { CONTENT_LENGTH_HEADER } from "./store.js";

/*
 * How served bytes are labelled (media's objects, tools' result files): their ETag, whether If-None-Match names
 * it, and a disposition that keeps a browser from running them on the platform's origin.
 */

/** Types a browser would run or render as a document: HTML, SVG, XML and scripts. */
export function runsInBrowser(type: string): boolean {
  const essence = type.split(";")[0];
  return (
    /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|text\/xsl)$/.test(essence) ||
    essence.endsWith("+xml") ||
    /^(text|application)\/(x-)?(javascript|ecmascript)$/.test(essence) ||
    essence === "multipart/x-mixed-replace"
  );
}

/**
 * Content-Disposition of served bytes: `attachment` for types a browser would
 * run (served on the platform's origin they could act as it), `inline`
 * otherwise; the name as RFC 6266 writes it (an ASCII fallback and UTF-8).
 */
export function dispositionOf(name: string, type: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${runsInBrowser(type) ? "attachment" : "inline"}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The strong ETag of bytes with this digest. */
export function etagOf(sha256: string): string {
  return `"${sha256}"`;
}

/** Whether If-None-Match names this ETag (or `*`), compared weakly as RFC 9110 asks for it. */
export function noneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(",").some((each) => {
    const tag = each.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}

/** A sandboxing CSP for served bytes: a document opened from them can load and run nothing. */
export const SANDBOX = "default-src 'none'; sandbox";

/** Served bytes as their answer's headers see them. */
export interface ServedBytes {
  /** Lowercase hex SHA-256 of the bytes (the ETag). */
  sha256: string;
  name: string;
  contentType: string;
  size: number;
  cacheControl: string;
}

/**
 * The head of a byte answer (media's objects, tools' result files): ETag, caching, Accept-Ranges, a disposition and
 * CSP that keep a browser from running them, then 304 for If-None-Match (undefined: nothing to read), else one
 * Range (206 with Content-Range; `unsatisfiable` is the service's 416) or the whole, with its Content-Length.
 * Answers the part to read.
 */
export function answerBytes(
  call: HandlerContext,
  served: ServedBytes,
  unsatisfiable: (size: number) => Error,
): { start: number; end: number } | "whole" | undefined {
  const { size } = served;
  const etag = etagOf(served.sha256);
  const header = call.responseHeader;
  header.set("etag", etag);
  header.set("cache-control", served.cacheControl);
  header.set("accept-ranges", "bytes");
  header.set("content-disposition", dispositionOf(served.name, served.contentType));
  header.set("content-security-policy", SANDBOX);
  if (noneMatch(call.requestHeader.get("if-none-match"), etag)) {
    answerStatus(call, 304);
    return undefined;
  }
  const range = rangeOf(call.requestHeader.get("range"), size);
  if (range.kind === "unsatisfiable") throw unsatisfiable(size);
  if (range.kind === "whole") {
    header.set(CONTENT_LENGTH_HEADER, String(size));
    return "whole";
  }
  answerStatus(call, 206);
  header.set("content-range", `bytes ${range.start}-${range.end}/${size}`);
  header.set(CONTENT_LENGTH_HEADER, String(range.end - range.start + 1));
  return { start: range.start, end: range.end };
}
