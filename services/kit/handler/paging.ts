import { invalid } from "./problem.js";

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** The page size asked for: 1–200, 50 when unset. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalid("limit", `limit must be between 1 and ${MAX_LIMIT}`);
  }
  return limit;
}

/** Opaque cursors: the sort key of the last row served, base64url JSON. */
export function encodeCursor(position: unknown[]): string {
  return Buffer.from(JSON.stringify(position)).toString("base64url");
}

export function decodeCursor(cursor: string): unknown[] | undefined {
  if (cursor === "") return undefined;
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString());
    if (Array.isArray(position)) return position;
  } catch {
    // fall through to the problem below
  }
  throw invalid("cursor", "cursor is not one this service issued");
}

/**
 * A cursor of `size` text keys (ids, ISO times), as `page` made it from
 * strings; anything else (a forged or foreign cursor) is 400 naming `cursor`,
 * never a query on a mistyped key.
 */
export function decodeTextCursor(cursor: string, size: number): string[] | undefined {
  const position = decodeCursor(cursor);
  if (position === undefined) return undefined;
  if (position.length !== size || !position.every((key) => typeof key === "string" && key !== "")) {
    throw invalid("cursor", "cursor is not one this service issued");
  }
  return position as string[];
}

/**
 * A cursor of a (time, id) position, as `page` made it from an ISO time and an id: anything else, a time that is
 * none included, is 400 naming `cursor`, never a query on a mistyped key.
 */
export function decodeTimeCursor(cursor: string): { at: Date; id: string } | undefined {
  const position = decodeTextCursor(cursor, 2);
  if (position === undefined) return undefined;
  const at = new Date(position[0]!);
  if (Number.isNaN(at.getTime())) throw invalid("cursor", "cursor is not one this service issued");
  return { at, id: position[1]! };
}

/** Cuts a page fetched with limit + 1 rows and makes the next cursor from the last row kept. */
export function page<T>(rows: T[], limit: number, position: (row: T) => unknown[]): { items: T[]; nextCursor: string } {
  if (rows.length <= limit) return { items: rows, nextCursor: "" };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeCursor(position(items[items.length - 1])) };
}

/**
 * A page of a list paged with `limit` and `before` (an id, newest first), cut from `limit + 1` rows: its items, and
 * the id to pass as `before` for the next page ("" on the last).
 */
export function pageBefore<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextBefore: string } {
  const items = rows.slice(0, limit);
  return { items, nextBefore: rows.length > limit ? items[items.length - 1].id : "" };
}
