import type { EntityManager } from "@mikro-orm/postgresql";
import { advisoryLock } from "../db/advisory-lock.js";
import { problem } from "../handler/problem.js";

/** A cap on what one owner keeps live at once (open goals, live overlay tokens, watches). */
export interface Cap {
  /** What is counted, e.g. `tips.goals`; with the owner, it names the advisory lock. */
  name: string;
  /** Whose objects are counted: a creator, a person. */
  owner: string;
  /** At most this many live at once. */
  limit: number;
  /** The refusal's code, in the service's words (`goal.limit`). */
  code: string;
  /** The refusal's detail: the limit, and how to make room. */
  detail: string;
}

/**
 * Refuses a create that would take the owner past the cap: 409 with the cap's
 * code and a `limit` member. Called inside the creating transaction, before
 * the insert: it takes a transaction-scoped advisory lock on (name, owner)
 * first, so concurrent creates of one owner count one after the other, each
 * seeing the ones committed before it (read committed), and no more than
 * `limit` are ever live. `live` counts only what still takes room (a revoked,
 * closed or deleted object does not).
 */
export async function requireBelowCap(
  em: EntityManager,
  cap: Cap,
  live: (em: EntityManager) => Promise<number>,
): Promise<void> {
  await advisoryLock(em, `${cap.name}:${cap.owner}`);
  if ((await live(em)) >= cap.limit) throw problem(409, cap.code, cap.detail, { limit: cap.limit });
}
