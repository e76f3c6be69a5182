import type { Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";

/**
 * The most coins one account holds: far beyond any loyalty program, far inside bigint. One change moves at most as
 * many (the contract's rule on `amount`, 1 to 10^15).
 */
export const MAX_COINS = 1_000_000_000_000_000n;

/** The balance a change leaves, refused when short (409 insufficient_funds) or past MAX_COINS. */
export function balanceAfter(subject: string, current: bigint, delta: bigint): bigint {
  const balance = current + delta;
  if (balance < 0n) {
    throw problem(409, "insufficient_funds", "The coin balance is short of the amount.", {
      subject,
      balance: current.toString(),
    });
  }
  if (balance > MAX_COINS)
    throw problem(409, "coins.balance_limit", `A coin balance holds at most ${MAX_COINS}.`, { subject });
  return balance;
}

/**
 * The app whose coins a call moves. A token may only act for its own app_id:
 * the token must carry one, and a request naming another is refused.
 */
export function coinsAppId(principal: Principal, requested: string): string {
  if (!principal.appId) {
    throw problem(403, "coins.app_required", "Coins belong to an app: the token must carry the app_id it acts for.");
  }
  if (requested !== "" && requested !== principal.appId) {
    throw problem(403, "coins.app_mismatch", "A token may only act for its own app_id.", { app_id: requested });
  }
  return principal.appId;
}

/** Accounts are locked in this order so two opposite transfers cannot deadlock. */
export function lockOrder(a: string, b: string): [string, string] {
  return a < b ? [a, b] : [b, a];
}
