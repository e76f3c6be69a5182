import type { Principal } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/problem.js";

/** Coins move in positive whole units; anything else is refused. */
export function requireAmount(field: string, amount: bigint): bigint {
  if (amount <= 0n) throw invalid(field, `${field} must be a positive whole number of coins`);
  return amount;
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
