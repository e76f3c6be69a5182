import { problem } from "../../kit/handler/problem.js";

/**
 * What billing sells and at what price. Prices are billing's alone: a client
 * names a pack, an amount of credit or a subscription tier, never a price.
 */
export interface Catalogue {
  /** Credit packs by id: the price charged and the credit granted. */
  packs: Record<string, { currency: string; price: bigint; credit: bigint }>;
  /** Credit bought by amount, per currency: bounds of the amount; charged at face value. */
  creditRates: Record<string, { min: bigint; max: bigint }>;
  /** Channel subscription tiers: the price of one period. */
  tiers: Record<string, { currency: string; price: bigint }>;
}

export const DEFAULT_TIER = "tier_1";

export const defaultCatalogue: Catalogue = {
  packs: {
    credits_500: { currency: "USD", price: 500n, credit: 500n },
    credits_1000: { currency: "USD", price: 1000n, credit: 1000n },
    credits_2500: { currency: "USD", price: 2500n, credit: 2500n },
    credits_500_eur: { currency: "EUR", price: 500n, credit: 500n },
  },
  creditRates: {
    USD: { min: 100n, max: 100_000n },
    EUR: { min: 100n, max: 100_000n },
  },
  tiers: {
    tier_1: { currency: "USD", price: 499n },
    tier_2: { currency: "USD", price: 999n },
    tier_3: { currency: "USD", price: 2499n },
  },
};

/** A catalogue from JSON with amounts as strings or integers. */
export function parseCatalogue(json: string): Catalogue {
  const raw = JSON.parse(json) as {
    packs?: Record<string, { currency: string; price: string | number; credit: string | number }>;
    credit_rates?: Record<string, { min: string | number; max: string | number }>;
    tiers?: Record<string, { currency: string; price: string | number }>;
  };
  const map = <A, B>(record: Record<string, A> | undefined, f: (a: A) => B) =>
    Object.fromEntries(Object.entries(record ?? {}).map(([k, v]) => [k, f(v)]));
  return {
    packs: map(raw.packs, (p) => ({ currency: p.currency, price: BigInt(p.price), credit: BigInt(p.credit) })),
    creditRates: map(raw.credit_rates, (r) => ({ min: BigInt(r.min), max: BigInt(r.max) })),
    tiers: map(raw.tiers, (t) => ({ currency: t.currency, price: BigInt(t.price) })),
  };
}

export interface Price {
  currency: string;
  price: bigint;
  /** Credit granted by a credit purchase; 0 for subscriptions. */
  credit: bigint;
}

/** The price of a catalogue pack. */
export function packPrice(catalogue: Catalogue, pack: string): Price {
  const found = catalogue.packs[pack];
  if (!found)
    throw problem(
      422,
      "billing.unknown_product",
      `There is no credit pack ${JSON.stringify(pack)} in billing's catalogue.`,
      { packs: Object.keys(catalogue.packs) },
    );
  return { currency: found.currency, price: found.price, credit: found.credit };
}

/** The price of an amount of credit: face value, within the currency's bounds. */
export function creditPrice(catalogue: Catalogue, currency: string, amount: bigint): Price {
  const rate = catalogue.creditRates[currency];
  if (!rate)
    throw problem(422, "billing.unknown_product", `Billing sells no credit in ${currency}.`, {
      currencies: Object.keys(catalogue.creditRates),
    });
  if (amount < rate.min || amount > rate.max) {
    throw problem(
      422,
      "billing.amount_out_of_range",
      `Credit in ${currency} is sold from ${rate.min} to ${rate.max} minor units.`,
      {
        min: rate.min.toString(),
        max: rate.max.toString(),
      },
    );
  }
  return { currency, price: amount, credit: amount };
}

/** The price of one period of a channel subscription at a tier ("" = the default tier). */
export function tierPrice(catalogue: Catalogue, tier: string): Price & { tier: string } {
  const name = tier || DEFAULT_TIER;
  const found = catalogue.tiers[name];
  if (!found)
    throw problem(
      422,
      "billing.unknown_tier",
      `There is no subscription tier ${JSON.stringify(name)} in billing's catalogue.`,
      { tiers: Object.keys(catalogue.tiers) },
    );
  return { tier: name, currency: found.currency, price: found.price, credit: 0n };
}
