import { requireCurrency } from "../../kit/handler/money.js";
import { invalid } from "../../kit/handler/problem.js";

/** A price or shipping cost as stored: minor units and currency, both or neither. */
export interface Price {
  minor: bigint;
  currency: string;
}

/** Refuses a money field that is not whole non-negative minor units with an ISO currency. */
export function requirePrice(field: string, money: { minorUnits: bigint; currency: string }): Price {
  requireCurrency(`${field}.currency`, money.currency);
  if (money.minorUnits < 0n) throw invalid(`${field}.minor_units`, `${field}.minor_units must not be negative`);
  return { minor: money.minorUnits, currency: money.currency };
}

/**
 * When an observation was made: a service may state it (its own crawl time),
 * never in the future; anyone else's observation is made when recorded.
 */
export function observedAt(stated: Date | undefined, statedByService: boolean, now: Date): Date {
  if (stated === undefined) return now;
  if (!statedByService)
    throw invalid(
      "observation.observed_at",
      "Only services state observed_at; a person's observation is made when recorded.",
    );
  if (stated > now) throw invalid("observation.observed_at", "observed_at is never in the future.");
  return stated;
}
