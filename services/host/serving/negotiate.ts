import type { ServedFile, Variant } from "./manifest.js";

const BR = 1;
const GZIP = 2;
/** Accept-Encoding values seen, parsed once each: clients send a handful of distinct ones. */
const parsed = new Map<string, number>();
const PARSED_KEPT = 64;

/** The codings an Accept-Encoding value allows, of br and gzip (a bit each); `*` stands for those it leaves out. */
function acceptedCodings(header: string): number {
  let found = parsed.get(header);
  if (found !== undefined) return found;
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...parameters] = part.split(";");
    const q = parameters.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)).find(Boolean);
    weights.set(name.trim().toLowerCase(), q ? Number(q[1]) : 1);
  }
  const allows = (coding: string) => (weights.get(coding) ?? weights.get("*") ?? 0) > 0;
  found = (allows("br") ? BR : 0) | (allows("gzip") || allows("x-gzip") ? GZIP : 0);
  if (parsed.size >= PARSED_KEPT) parsed.clear();
  parsed.set(header, found);
  return found;
}

/** The representation to send: brotli, then gzip, when the client allows it and the deploy kept that copy. */
export function variantFor(file: ServedFile, acceptEncoding: string | undefined): Variant {
  if (acceptEncoding === undefined || (file.br === undefined && file.gzip === undefined)) return file.identity;
  const accepted = acceptedCodings(acceptEncoding);
  if (file.br && accepted & BR) return file.br;
  if (file.gzip && accepted & GZIP) return file.gzip;
  return file.identity;
}

/** If-None-Match against a strong ETag, compared weakly (RFC 9110 13.1.2): `*`, or one of a list, W/ or not. */
export function etagMatches(header: string, etag: string): boolean {
  if (header === etag || header.trim() === "*") return true;
  return header.split(",").some((candidate) => {
    const tag = candidate.trim();
    return (tag.startsWith("W/") ? tag.slice(2) : tag) === etag;
  });
}
