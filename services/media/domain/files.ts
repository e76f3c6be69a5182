import { invalid } from "../../kit/handler/problem.js";

/**
 * A key: 24 base64url characters, 144 random bits; never derived from the content (a digest is guessable).
 * The contract holds the keys reads name to this shape (media.proto, FileReadRequest.key).
 */
export const KEY_PATTERN = /^[A-Za-z0-9_-]{24}$/;

/** The key of a new object from 18 random bytes. */
export function keyFrom(random: Uint8Array): string {
  if (random.length !== 18) throw new Error("a key takes 18 random bytes");
  return Buffer.from(random).toString("base64url");
}

/**
 * A file's name as uploaded, stored as sent. The contract holds it to 255
 * characters and never a path (no separators or control characters, not `.`
 * or `..`), but cannot require one: only an upload's first message names the
 * file, so an empty name is refused here (400 naming `name`).
 */
export function checkedName(name: string): string {
  if (name === "") throw invalid("name", "Field name is empty: the file part needs a filename.");
  return name;
}

/**
 * A media type (the contract holds it to `type/subtype` and parameters), its
 * essence lowercased and parameters trimmed; empty is application/octet-stream.
 */
export function checkedContentType(type: string): string {
  const trimmed = type.trim();
  if (trimmed === "") return "application/octet-stream";
  const [essence, ...parameters] = trimmed.split(";");
  return [essence.toLowerCase(), ...parameters.map((each) => each.trim())].join("; ");
}

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
