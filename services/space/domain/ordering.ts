/**
 * The orderings of a space's threads, pinned threads first in each:
 *
 * - new: newest first (created_at, then id);
 * - top: highest score first, newest first among equals;
 * - hot: the kit's hot@1 rank (`hotness`, as deals ranks offers) descending,
 *   then id. It depends only on the score and the creation time, never on
 *   the time of reading, so it is stored with the thread (changed with its
 *   score, in the vote's transaction) and pages of one ordering follow one
 *   fixed key.
 *
 * Paging: each cursor is the last thread's full sort key (pinned, key…, id),
 * and the next page starts strictly after it, so every thread whose key did
 * not change between two pages is served exactly once, in every ordering. A
 * thread whose key changed meanwhile is served where its new key falls: a
 * new thread (in new, always before the cursor: not served), a vote (hot,
 * top) or a pin may move a thread across the cursor, so that one thread is
 * then served twice or not at all. Hot's key never changes with the time of
 * reading, so time alone never reorders pages.
 */
export type Order = "hot" | "new" | "top";

/** A position in an ordering: pinned (1 or 0), the ordering's keys, then the id. */
export type Position = [number, ...(number | string)[]];

/** The kinds of key after `pinned` of each ordering: a number, an ISO time, the id. */
const KEYS: Record<Order, ("number" | "time" | "id")[]> = {
  hot: ["number", "id"],
  new: ["time", "id"],
  top: ["number", "time", "id"],
};

/** A cursor's position checked against its ordering; undefined when it is not one of ours. */
export function checkPosition(order: Order, position: unknown[]): Position | undefined {
  const [pinned, ...keys] = position;
  const kinds = KEYS[order];
  if ((pinned !== 0 && pinned !== 1) || keys.length !== kinds.length) return undefined;
  const fits = kinds.every((kind, i) => {
    const key = keys[i];
    if (kind === "number") return typeof key === "number" && Number.isFinite(key);
    if (kind === "time") return typeof key === "string" && !Number.isNaN(Date.parse(key));
    return typeof key === "string" && /^thr_[a-z0-9]{1,64}$/.test(key);
  });
  return fits ? (position as Position) : undefined;
}
