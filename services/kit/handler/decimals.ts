import { invalid } from "./problem.js";

/** A decimal as a source states it: a sign, digits, a point and digits; no exponent, grouping or spaces. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** Longest decimal text kept (PostgreSQL numeric holds far more; this bounds what a caller may store). */
export const MAX_DECIMAL_LENGTH = 64;

/**
 * A decimal value checked and kept exactly as stated (analysis K13): the text
 * is stored verbatim beside a PostgreSQL `numeric` of the same value (cast in
 * SQL), and compared only there; it never becomes a JS float. 400 naming
 * `field` for anything that is not a plain decimal.
 */
export function requireDecimal(field: string, text: string): string {
  if (text === "") throw invalid(field, `${field} is required: a decimal such as 12.50`);
  if (text.length > MAX_DECIMAL_LENGTH || !DECIMAL.test(text)) {
    throw invalid(field, `${field} is a plain decimal (digits, an optional sign and point; at most 64 characters)`);
  }
  return text;
}
