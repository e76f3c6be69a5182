/** What a Range header asks of an object of `size` bytes. */
export type RangeAnswer = { kind: "whole" } | { kind: "part"; start: number; end: number } | { kind: "unsatisfiable" };

/**
 * One byte range (RFC 9110 §14): `bytes=a-b`, `bytes=a-` or `bytes=-n`. A
 * header that is not one valid byte range (other units, several ranges, a
 * malformed one) is ignored, as the RFC allows, and the whole object served.
 */
export function rangeOf(header: string | null, size: number): RangeAnswer {
  if (header === null) return { kind: "whole" };
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return { kind: "whole" };
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "part", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const last = match[2] === "" ? Infinity : Number(match[2]);
  if (last < start) return { kind: "whole" };
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "part", start, end: Math.min(last, size - 1) };
}
