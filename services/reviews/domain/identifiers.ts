import { invalid } from "../../kit/handler/problem.js";

/**
 * The kinds of alias (the contract's input rules refuse any other); every kind but `name` is an identifier, owned by
 * one entity at most.
 */
export type AliasKind = "name" | "url" | "gtin" | "sku" | "mpn" | "source" | "external_id";

/** The identifier kinds, in the order resolution reads them. */
export const IDENTIFIER_KINDS = ["url", "gtin", "sku", "mpn", "source", "external_id"] as const;

const MAX = 512;

/** A name as compared: NFKC, case-folded, whitespace collapsed. */
export function nameKey(name: string): string {
  return name.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}

/**
 * An alias's value as stored and compared, the same at write and at resolve
 * (hardest rule 2). Refuses, naming `field`, what is not an identifier of its kind.
 */
export function normalizeAlias(field: string, kind: AliasKind, value: string): string {
  const trimmed = value.trim();
  if (trimmed === "") throw invalid(field, `${field} is required`);
  if (trimmed.length > MAX) throw invalid(field, `${field} is at most ${MAX} characters`);
  switch (kind) {
    case "name":
      return nameKey(trimmed);
    case "url":
      return normalizeUrl(field, trimmed);
    case "gtin":
      return normalizeGtin(field, trimmed);
    case "sku":
    case "mpn":
      // Codes differ in spacing and case between shops, never in their letters and digits.
      return trimmed
        .normalize("NFKC")
        .toUpperCase()
        .replace(/[\s-]+/g, "");
    case "source":
      if (!/^[a-z0-9][a-z0-9._-]{0,63}$/i.test(trimmed)) throw invalid(field, `${field} is a source key`);
      return trimmed.toLowerCase();
    case "external_id":
      return trimmed.normalize("NFKC");
  }
}

/** A URL without what does not change the page: scheme and host case, www., default port, fragment, tracking, a trailing slash. */
export function normalizeUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(field, `${field} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(field, `${field} must be http or https`);
  if (url.username !== "" || url.password !== "") throw invalid(field, `${field} must not carry credentials`);
  const host = url.hostname.replace(/^www\./, "");
  const params = [...url.searchParams.entries()]
    .filter(([key]) => !/^utm_/i.test(key))
    .sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1));
  const query = params.length ? "?" + new URLSearchParams(params).toString() : "";
  const path = url.pathname.replace(/\/+$/, "");
  return `${host}${url.port ? `:${url.port}` : ""}${path}${query}`;
}

/** A GTIN (8, 12, 13 or 14 digits) as 14 digits, its check digit verified. */
export function normalizeGtin(field: string, value: string): string {
  const digits = value.replace(/[\s-]/g, "");
  if (!/^(\d{8}|\d{12,14})$/.test(digits)) throw invalid(field, `${field} is a GTIN of 8, 12, 13 or 14 digits`);
  const padded = digits.padStart(14, "0");
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(padded[i]) * (i % 2 === 0 ? 3 : 1);
  if ((10 - (sum % 10)) % 10 !== Number(padded[13])) throw invalid(field, `${field} has a wrong check digit`);
  return padded;
}
