import { invalid } from "../../kit/handler/problem.js";
import { requireUrl } from "../../kit/handler/urls.js";

export type AliasKind = "gtin" | "mpn" | "sku" | "url" | "name";

/** Strongest first: when aliases name different products, the strongest decides which one resolves. */
export const ALIAS_KINDS: AliasKind[] = ["gtin", "mpn", "sku", "url", "name"];

/**
 * An alias as stored and compared: a GTIN as 14 digits (GTIN-8/12/13 zero-padded),
 * part numbers and SKUs upper-cased without spaces or dashes, URLs without
 * scheme, `www.`, fragment or trailing slash, names exact (case kept: the spec's
 * "exact name") with only surrounding and repeated whitespace and the Unicode
 * composition (NFC) normalised.
 */
export function normaliseAlias(kind: AliasKind, raw: string): string {
  const value = raw.trim();
  if (value.length > 500) throw invalid(kind, `${kind} holds at most 500 characters`);
  switch (kind) {
    case "gtin":
      if (!/^(\d{8}|\d{12}|\d{13}|\d{14})$/.test(value)) throw invalid("gtin", "gtin is 8, 12, 13 or 14 digits");
      return value.padStart(14, "0");
    case "mpn":
    case "sku":
      return value.toUpperCase().replace(/[\s-]+/g, "");
    case "url": {
      const url = requireUrl("url", value, ["http", "https"]);
      return `${url.host.toLowerCase().replace(/^www\./, "")}${url.pathname.replace(/\/+$/, "")}${url.search}`;
    }
    case "name":
      return value.normalize("NFC").replace(/\s+/g, " ");
  }
}
