import type { EntityManager } from "@mikro-orm/postgresql";

/** One limit: at most `limit` hits per `windowMs` for one key of one named rule. */
export interface RateRule {
  /** The rule's name, e.g. `deals.vote.person`. */
  name: string;
  /** Whom it counts: a subject, an IP hash, an offer id. */
  key: string;
  limit: number;
  windowMs: number;
}

// STUB: being written (kit helper). Counts a hit for each rule in PostgreSQL inside the caller's
// transaction; over any limit throws 429 `rate.limited` with `retry_after_seconds` (and Retry-After).
export async function rateLimit(_em: EntityManager, _rules: RateRule[], _at: Date): Promise<void> {}

// STUB: the calling client's IP address as the gateway saw it (header `pf-client-ip`), "" when unknown.
export function clientIpOf(_header: Headers): string {
  return "";
}
