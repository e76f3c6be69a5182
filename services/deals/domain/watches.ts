import type { Price } from "./observations.js";

export type WatchKind = "keyword" | "product" | "price_below" | "saved_search";

export interface WatchRule {
  kind: WatchKind;
  keyword: string;
  productId: string | null;
  priceBelow: Price | null;
}

export interface ObservedOffer {
  title: string;
  description: string;
  productId: string | null;
  price: Price | null;
}

/** The words of a keyword, lower-cased; a watch needs all of them. */
export function keywordWords(keyword: string): string[] {
  return keyword
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}

function mentions(keyword: string, offer: ObservedOffer): boolean {
  const words = new Set(keywordWords(`${offer.title} ${offer.description}`));
  const wanted = keywordWords(keyword);
  return wanted.length > 0 && wanted.every((word) => words.has(word));
}

/**
 * Whether an observation of an offer matches a watch. Saved searches never
 * notify; a price-below watch needs an observed price in its currency below
 * its threshold, on its product or keyword.
 */
export function watchMatches(watch: WatchRule, offer: ObservedOffer): boolean {
  switch (watch.kind) {
    case "saved_search":
      return false;
    case "keyword":
      return mentions(watch.keyword, offer);
    case "product":
      return watch.productId !== null && watch.productId === offer.productId;
    case "price_below": {
      const scoped = watch.productId !== null ? watch.productId === offer.productId : mentions(watch.keyword, offer);
      const below = watch.priceBelow;
      return (
        scoped &&
        below !== null &&
        offer.price !== null &&
        offer.price.currency === below.currency &&
        offer.price.minor < below.minor
      );
    }
  }
}
