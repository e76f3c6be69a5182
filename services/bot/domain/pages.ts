/**
 * A page of a list paged with limit and before (the spec's words), cut from `limit + 1` rows fetched newest first:
 * its items, and the id to pass as `before` for the next page ("" on the last).
 */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextBefore: string } {
  const items = rows.slice(0, limit);
  return { items, nextBefore: rows.length > limit ? items[items.length - 1].id : "" };
}
