import { parse } from "range-parser";

/** What a Range header asks of an object of `size` bytes. */
export type RangeAnswer = { kind: "whole" } | { kind: "part"; start: number; end: number } | { kind: "unsatisfiable" };

/** range-parser's `code` bit for a range-set with a malformed element (its bit 2 is an unsatisfiable one). */
const MALFORMED = 1;

/**
 * One byte range (RFC 9110 §14): `bytes=a-b`, `bytes=a-` or `bytes=-n`, read
 * by range-parser. A header that is not a valid byte range-set (other units, a
 * malformed or reversed range) is ignored, as the RFC allows, and the whole
 * object served; ranges none of which overlap the object are unsatisfiable.
 * Several satisfiable ranges (no multipart answer is made) are answered by
 * `several`: the whole object (media) or the first range alone (host's sites).
 */
export function rangeOf(
  header: string | null | undefined,
  size: number,
  several: "whole" | "first" = "whole",
): RangeAnswer {
  if (header === null || header === undefined) return { kind: "whole" };
  const { code, type, ranges } = parse(size, header.trim());
  if (type !== "bytes" || code & MALFORMED) return { kind: "whole" };
  if (ranges.length === 0) return { kind: "unsatisfiable" };
  if (ranges.length > 1 && several === "whole") return { kind: "whole" };
  const [{ start, end }] = ranges;
  return { kind: "part", start, end };
}
