import { parse } from "range-parser";

/** What a Range header asks of an object of `size` bytes. */
export type RangeAnswer = { kind: "whole" } | { kind: "part"; start: number; end: number } | { kind: "unsatisfiable" };

/** range-parser's `code` bit for a range-set with a malformed element (its bit 2 is an unsatisfiable one). */
const MALFORMED = 1;

/**
 * One byte range (RFC 9110 §14): `bytes=a-b`, `bytes=a-` or `bytes=-n`, read
 * by range-parser. A header that is not one valid byte range (other units, a
 * malformed or reversed range, several satisfiable ranges) is ignored, as the
 * RFC allows, and the whole object served; ranges none of which overlap the
 * object are unsatisfiable.
 */
export function rangeOf(header: string | null, size: number): RangeAnswer {
  if (header === null) return { kind: "whole" };
  const { code, type, ranges } = parse(size, header.trim());
  if (type !== "bytes" || code & MALFORMED || ranges.length > 1) return { kind: "whole" };
  if (ranges.length === 0) return { kind: "unsatisfiable" };
  return { kind: "part", start: ranges[0].start, end: ranges[0].end };
}
