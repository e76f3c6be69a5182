import { invalid } from "../../kit/handler/problem.js";

/** Symbols the routes use as path segments: a symbol may never be one of them (`GET /instruments/resolve`). */
const RESERVED = new Set(["RESOLVE"]);

/**
 * A symbol (or ticker alias) as stored and compared: trimmed, upper case, with
 * one class separator, so `brk.b`, `BRK-B` and `BRK/B` are one form (`BRK.B`).
 * Answers "" for what cannot be a symbol; `requireSymbol` says why.
 */
export function normalizeSymbol(raw: string): string {
  const symbol = raw.trim().toUpperCase().replace(/[-/]/g, ".");
  return /^[A-Z0-9^=]{1,15}(\.[A-Z0-9]{1,8})?$/.test(symbol) ? symbol : "";
}

/** The normalised symbol, or 400 naming `field`. */
export function requireSymbol(field: string, raw: string): string {
  const symbol = normalizeSymbol(raw);
  if (symbol === "")
    throw invalid(field, `${field} is 1 to 15 letters or digits, with at most one class suffix (BRK.B)`);
  if (RESERVED.has(symbol)) throw invalid(field, `${field} may not be ${symbol}: it is a route's word`);
  return symbol;
}

/** A CIK as 10 digits with leading zeros; "" for what is not one. */
export function normalizeCik(raw: string): string {
  const digits = raw.trim().replace(/^CIK/i, "");
  return /^\d{1,10}$/.test(digits) ? digits.padStart(10, "0") : "";
}

/** A name as resolution compares it: NFKC, case-folded, whitespace collapsed; exact equality, nothing fuzzy. */
export function normalizeName(raw: string): string {
  return raw.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
}
