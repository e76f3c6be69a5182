import { invalid } from "./problem.js";

/**
 * If-Match as the writer's expectation (RFC 9110 §13.1.1): a revision (`"3"` or
 * `3`), "any" for `*` (the record must exist), or "never" for a weak tag, which
 * strong comparison never matches; undefined when absent.
 */
export function parseIfMatch(header: string | null): bigint | "any" | "never" | undefined {
  if (header === null || header.trim() === "") return undefined;
  const value = header.trim();
  if (value === "*") return "any";
  if (value.startsWith("W/")) return "never";
  const match = /^"?(\d{1,18})"?$/.exec(value);
  if (!match) throw invalid("If-Match", "If-Match must be the record's revision");
  return BigInt(match[1]);
}
