import type { ByteRange } from "../../kit/blobs/store.js";

/** A Range none of whose bytes exist: 416. */
export const UNSATISFIABLE = "unsatisfiable";

const BYTES = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*(?:,|$)/i;

/**
 * The first byte range of a Range header over `size` bytes (a multi-range answer is not made: its first range is), or
 * undefined when the header is not one this answers (a 200 then), or UNSATISFIABLE.
 */
export function rangeOf(header: string, size: number): ByteRange | typeof UNSATISFIABLE | undefined {
  const match = BYTES.exec(header);
  if (!match) return undefined;
  const [, first, last] = match;
  if (first === "") {
    // A suffix: the last N bytes.
    if (last === "") return undefined;
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return UNSATISFIABLE;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Number(last);
  if (end < start) return undefined;
  if (start >= size) return UNSATISFIABLE;
  return { start, end: Math.min(end, size - 1) };
}
