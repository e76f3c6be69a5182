import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * An offer. Each state is its own column (merged_into, disabled_at,
 * expired_at), so merging, disabling and expiring never overwrite one another
 * and every one is undone by clearing its column.
 */
export const OfferRow = defineEntity({
  name: "OfferRow",
  tableName: "offers",
  uniques: [{ name: "offers_one_per_link", properties: ["linkKey"] }],
  indexes: [
    { name: "offers_by_canonical", properties: ["mergedInto"] },
    { name: "offers_stated_end", properties: ["expiresAt"], where: "expired_at is null and expires_at is not null" },
  ],
  properties: {
    id: p.text().primary(),
    link: p.text(),
    linkKey: p.text(),
    title: p.text(),
    description: p.text(),
    category: p.text(),
    productId: p.text().nullable(),
    expiresAt: p.datetime().nullable(),
    submittedBy: p.text(),
    aiAssisted: p.boolean(),
    noindex: p.boolean(),
    reviewedBy: p.text().nullable(),
    reviewedAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
    expiredBy: p.text().nullable(),
    disabledAt: p.datetime().nullable(),
    mergedInto: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type OfferRow = InferEntity<typeof OfferRow>;

/** A price observation: insert-only, prices are never edited in place. Unobserved fields stay null. */
export const ObservationRow = defineEntity({
  name: "ObservationRow",
  tableName: "observations",
  checks: [
    { name: "observations_condition_check", expression: "condition in ('new', 'used', 'refurbished')" },
    {
      name: "observations_availability_check",
      expression: "availability in ('in_stock', 'out_of_stock', 'preorder', 'limited')",
    },
    {
      name: "observations_price_check",
      expression: "(price_minor is null) = (price_currency is null) and price_minor >= 0",
    },
    {
      name: "observations_shipping_check",
      expression: "(shipping_minor is null) = (shipping_currency is null) and shipping_minor >= 0",
    },
  ],
  indexes: [{ name: "observations_by_offer", properties: ["offerId", "id"] }],
  properties: {
    id: p.text().primary(),
    offerId: p.text(),
    observedBy: p.text(),
    priceMinor: p.bigint().nullable(),
    priceCurrency: p.text().nullable(),
    shippingMinor: p.bigint().nullable(),
    shippingCurrency: p.text().nullable(),
    condition: p.text().nullable(),
    availability: p.text().nullable(),
    observedAt: p.datetime(),
    recordedAt: p.datetime(),
  },
});
export type ObservationRow = InferEntity<typeof ObservationRow>;

/** A vote; removing or replacing it sets removed_at and keeps the row. One present vote per person and offer. */
export const VoteRow = defineEntity({
  name: "VoteRow",
  tableName: "votes",
  checks: [{ name: "votes_value_check", expression: "abs(value) = 1" }],
  uniques: [{ name: "votes_one_present", properties: ["offerId", "voter"], where: "removed_at is null" }],
  indexes: [{ name: "votes_by_voter", properties: ["voter", "createdAt"] }],
  properties: {
    id: p.text().primary(),
    offerId: p.text(),
    voter: p.text(),
    value: p.smallint(),
    weight: p.double(),
    ipHash: p.text(),
    createdAt: p.datetime(),
    removedAt: p.datetime().nullable(),
  },
});
export type VoteRow = InferEntity<typeof VoteRow>;

/** A flag: a person's report (one open per person and offer) or a vote-ring flag raised by the service. */
export const FlagRow = defineEntity({
  name: "FlagRow",
  tableName: "flags",
  checks: [
    {
      name: "flags_reason_check",
      expression: "reason in ('expired', 'price_wrong', 'duplicate', 'spam', 'other', 'vote_ring')",
    },
    { name: "flags_outcome_check", expression: "outcome in ('dismissed', 'actioned')" },
  ],
  uniques: [{ name: "flags_one_open", properties: ["offerId", "reporter"], where: "resolved_at is null" }],
  indexes: [{ name: "flags_by_offer", properties: ["offerId", "id"] }],
  properties: {
    id: p.text().primary(),
    offerId: p.text(),
    reporter: p.text(),
    reason: p.text(),
    note: p.text(),
    createdAt: p.datetime(),
    resolvedAt: p.datetime().nullable(),
    resolvedBy: p.text().nullable(),
    outcome: p.text().nullable(),
    resolution: p.text().nullable(),
  },
});
export type FlagRow = InferEntity<typeof FlagRow>;

/** The moderation audit: disable, enable, review, resolve_flag, expire, merge, unmerge. */
export const AuditRow = defineEntity({
  name: "AuditRow",
  tableName: "audit",
  indexes: [{ name: "audit_by_offer", properties: ["offerId", "id"] }],
  properties: {
    id: p.text().primary(),
    action: p.text(),
    offerId: p.text(),
    flagId: p.text().nullable(),
    actor: p.text(),
    reason: p.text(),
    details: p.json<Record<string, unknown>>(),
    createdAt: p.datetime(),
  },
});
export type AuditRow = InferEntity<typeof AuditRow>;

/** A person's review of AI-assisted text (usr_ reviewers only). */
export const ReviewRow = defineEntity({
  name: "ReviewRow",
  tableName: "reviews",
  checks: [{ name: "reviews_reviewer_check", expression: "reviewer ~ '^usr_'" }],
  indexes: [{ name: "reviews_by_offer", properties: ["offerId"] }],
  properties: {
    id: p.text().primary(),
    offerId: p.text(),
    reviewer: p.text(),
    note: p.text(),
    createdAt: p.datetime(),
  },
});
export type ReviewRow = InferEntity<typeof ReviewRow>;

/** A product. */
export const ProductRow = defineEntity({
  name: "ProductRow",
  tableName: "products",
  properties: {
    id: p.text().primary(),
    name: p.text(),
    createdAt: p.datetime(),
  },
});
export type ProductRow = InferEntity<typeof ProductRow>;

/** An alias names one product, for good: never re-pointed. */
export const ProductAliasRow = defineEntity({
  name: "ProductAliasRow",
  tableName: "product_aliases",
  checks: [{ name: "product_aliases_kind_check", expression: "kind in ('gtin', 'mpn', 'sku', 'url', 'name')" }],
  indexes: [{ name: "product_aliases_by_product", properties: ["productId"] }],
  properties: {
    kind: p.text().primary(),
    value: p.text().primary(),
    productId: p.text(),
    createdAt: p.datetime(),
  },
});
export type ProductAliasRow = InferEntity<typeof ProductAliasRow>;

/** A watch or saved search of one person. */
export const WatchRow = defineEntity({
  name: "WatchRow",
  tableName: "watches",
  checks: [{ name: "watches_kind_check", expression: "kind in ('keyword', 'product', 'price_below', 'saved_search')" }],
  indexes: [
    { name: "watches_by_owner", properties: ["owner", "id"] },
    { name: "watches_by_product", properties: ["productId"] },
    { name: "watches_by_keyword_words", properties: ["keywordWords"], type: "gin" },
  ],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    kind: p.text(),
    keyword: p.text(),
    /** The keyword's words, lower-cased: the words an offer must all mention. */
    keywordWords: p.array().defaultRaw("'{}'"),
    productId: p.text().nullable(),
    priceBelowMinor: p.bigint().nullable(),
    priceBelowCurrency: p.text().nullable(),
    query: p.text(),
    createdAt: p.datetime(),
  },
});
export type WatchRow = InferEntity<typeof WatchRow>;

/** One notification of one watch for one observation: the primary key makes it at most once. */
export const WatchMatchRow = defineEntity({
  name: "WatchMatchRow",
  tableName: "watch_matches",
  properties: {
    watchId: p.text().primary(),
    observationId: p.text().primary(),
    offerId: p.text(),
    matchedAt: p.datetime(),
  },
});
export type WatchMatchRow = InferEntity<typeof WatchMatchRow>;

export const entities = [
  OfferRow,
  ObservationRow,
  VoteRow,
  FlagRow,
  AuditRow,
  ReviewRow,
  ProductRow,
  ProductAliasRow,
  WatchRow,
  WatchMatchRow,
];
