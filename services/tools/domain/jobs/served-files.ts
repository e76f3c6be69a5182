/*
 * How served bytes are labelled, as media labels its objects (services/media/domain/files.ts): the same rules belong
 * in the kit beside `rangeOf` (blobs/), for both services to share.
 */

/** Types a browser would run or render as a document: HTML, SVG, XML and scripts. */
function runsInBrowser(type: string): boolean {
  const essence = type.split(";")[0];
  return (
    /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|text\/xsl)$/.test(essence) ||
    essence.endsWith("+xml") ||
    /^(text|application)\/(x-)?(javascript|ecmascript)$/.test(essence) ||
    essence === "multipart/x-mixed-replace"
  );
}

/**
 * Content-Disposition of served bytes: `attachment` for types a browser would run (served on the platform's origin
 * they could act as it), `inline` otherwise; the name as RFC 6266 writes it (an ASCII fallback and UTF-8).
 */
export function dispositionOf(name: string, type: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${runsInBrowser(type) ? "attachment" : "inline"}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Whether If-None-Match names this ETag (or `*`), compared weakly as RFC 9110 asks for it. */
export function noneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  return header.split(",").some((each) => {
    const tag = each.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}
