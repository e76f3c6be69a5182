import type { ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../db/sql.js";
import { outsideCall } from "../runtime/call.js";
import { problem } from "../handler/problem.js";

/** One limit: at most `limit` hits per `windowMs` for one key of one named rule. */
export interface RateRule {
  /** The rule's name, e.g. `deals.vote.person`. */
  name: string;
  /** Whom it counts: a subject, an IP hash, an offer id. */
  key: string;
  limit: number;
  windowMs: number;
}

/**
 * Counts one hit for each rule, inside the caller's transaction, in fixed
 * windows aligned to `windowMs` (from the epoch, by `at`). A rule already at
 * its limit is not counted, and the 429 `rate.limited` thrown rolls back the
 * other rules' hits with the caller's transaction: a refused request counts
 * against nothing. Over several limits, the problem names the one that frees
 * last. A counted hit holds its counter's row lock until the caller commits,
 * so concurrent calls for one key queue there and exactly `limit` get through.
 */
export async function rateLimit(em: EntityManager, rules: RateRule[], at: Date): Promise<void> {
  let refused: { rule: RateRule; retryAfterSeconds: number } | undefined;
  for (const rule of ordered(rules)) {
    if (!(Number.isInteger(rule.limit) && rule.limit >= 1 && Number.isInteger(rule.windowMs) && rule.windowMs >= 1)) {
      throw new Error(`rate rule ${rule.name}: limit and windowMs must be positive integers`);
    }
    const { start, end } = windowOf(rule, at);
    const counted = await sql(
      em,
      `insert into {rate_limits} (name, key, window_start, ends_at, hits) values (?, ?, ?, ?, 1)
       on conflict (name, key, window_start) do update set hits = {rate_limits}.hits + 1 where {rate_limits}.hits < ?
       returning hits`,
      [rule.name, rule.key, start, end, rule.limit],
    );
    if (counted.length > 0) continue;
    const retryAfterSeconds = Math.max(1, Math.ceil((end.getTime() - at.getTime()) / 1000));
    if (!refused || retryAfterSeconds > refused.retryAfterSeconds) refused = { rule, retryAfterSeconds };
  }
  if (refused) throw tooManyRequests(refused.rule.name, refused.retryAfterSeconds);
}

/**
 * Counts `rules` for a write another service does (community's forum writes, done by space): the hits are counted
 * and committed first, in a transaction of their own (never one held across the call), so concurrent requests pass
 * at most `limit` together; when `call` fails, refused or unanswered, they are given back, so such a request counts
 * against nothing and its retry is not refused for the failures before it.
 */
export async function rateLimitedCall<T>(
  ctx: { transaction<R>(work: (em: EntityManager) => Promise<R>): Promise<R> },
  rules: RateRule[],
  at: Date,
  call: () => Promise<T>,
): Promise<T> {
  await ctx.transaction((em) => rateLimit(em, rules, at));
  try {
    return await call();
  } catch (error) {
    // Outside the call: a call left unanswered until its deadline may commit nothing more, but the hit still goes
    // back. One that fails too (the database gone as well) leaves the hit: the limit errs on the side of counting.
    await outsideCall(() => ctx.transaction((em) => giveBack(em, rules, at))).catch(() => undefined);
    throw error;
  }
}

/**
 * Takes back the hit `rateLimit(em, rules, at)` counted, in the window of the same `at` (the hit's, even when the
 * next has begun), never below zero. Rules are taken in `rateLimit`'s order, so a give-back and a count never deadlock.
 */
async function giveBack(em: EntityManager, rules: RateRule[], at: Date): Promise<void> {
  for (const rule of ordered(rules)) {
    await sql(
      em,
      `update {rate_limits} set hits = hits - 1 where name = ? and key = ? and window_start = ? and hits > 0`,
      [rule.name, rule.key, windowOf(rule, at).start],
    );
  }
}

/** The kit's 429 `rate.limited`: the rule refused, and when to try again (the gateway's Retry-After). */
export function tooManyRequests(rule: string, retryAfterSeconds: number): ConnectError {
  return problem(429, "rate.limited", `Too many requests (${rule}); try again in ${retryAfterSeconds} seconds.`, {
    rule,
    retry_after_seconds: retryAfterSeconds,
  });
}

/** One order for every caller, so two calls taking the same counters never deadlock. */
function ordered(rules: RateRule[]): RateRule[] {
  return [...rules].sort((a, b) => (a.name === b.name ? compare(a.key, b.key) : compare(a.name, b.name)));
}

/** The fixed window `at` falls in, aligned to `windowMs` from the epoch. */
function windowOf(rule: RateRule, at: Date): { start: Date; end: Date } {
  const start = Math.floor(at.getTime() / rule.windowMs) * rule.windowMs;
  return { start: new Date(start), end: new Date(start + rule.windowMs) };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
