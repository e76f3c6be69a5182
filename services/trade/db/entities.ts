import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** An instrument. `name_key` is its name normalised for resolution (NFKC, case-folded, whitespace collapsed). */
export const InstrumentRow = defineEntity({
  name: "InstrumentRow",
  tableName: "instruments",
  uniques: [{ name: "instruments_symbol_key", properties: ["symbol"] }],
  indexes: [
    { name: "instruments_by_cik", properties: ["cik"] },
    { name: "instruments_by_name", properties: ["nameKey"] },
  ],
  checks: [
    {
      name: "instruments_kind_check",
      expression: "kind in ('equity', 'etf', 'fund', 'index', 'crypto', 'fx', 'other')",
    },
    { name: "instruments_status_check", expression: "status in ('active', 'inactive')" },
  ],
  properties: {
    id: p.text().primary(),
    symbol: p.text(),
    name: p.text(),
    nameKey: p.text(),
    kind: p.text(),
    exchange: p.text(),
    cik: p.text().nullable(),
    currency: p.text(),
    status: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type InstrumentRow = InferEntity<typeof InstrumentRow>;

/** An alias; ticker and CIK aliases are unique across instruments (resolution must be deterministic), names may repeat. */
export const InstrumentAliasRow = defineEntity({
  name: "InstrumentAliasRow",
  tableName: "instrument_aliases",
  uniques: [{ name: "instrument_aliases_one_owner", properties: ["kind", "normalized"], where: "kind <> 'name'" }],
  indexes: [{ name: "instrument_aliases_by_value", properties: ["kind", "normalized"] }],
  checks: [{ name: "instrument_aliases_kind_check", expression: "kind in ('ticker', 'cik', 'name')" }],
  properties: {
    instrumentId: p.text().primary(),
    kind: p.text().primary(),
    normalized: p.text().primary(),
    value: p.text(),
    createdAt: p.datetime(),
  },
});
export type InstrumentAliasRow = InferEntity<typeof InstrumentAliasRow>;

/** An observation as stated: `value_text` verbatim, `value` the same decimal as `numeric` for comparison. Insert-only. */
export const ObservationRow = defineEntity({
  name: "ObservationRow",
  tableName: "observations",
  uniques: [{ name: "observations_one_per_ref", properties: ["sourceKey", "sourceRef"] }],
  indexes: [
    { name: "observations_by_series", properties: ["instrumentId", "metric", "unit", "currency", "observedAt"] },
  ],
  properties: {
    id: p.text().primary(),
    instrumentId: p.text(),
    metric: p.text(),
    valueText: p.text(),
    value: p.decimal("string").columnType("numeric"),
    unit: p.text(),
    currency: p.text(),
    observedAt: p.datetime(),
    retrievedAt: p.datetime(),
    sourceKey: p.text(),
    sourceRef: p.text(),
    recordedAt: p.datetime(),
  },
});
export type ObservationRow = InferEntity<typeof ObservationRow>;

/** A watchlist, private to its person. */
export const WatchlistRow = defineEntity({
  name: "WatchlistRow",
  tableName: "watchlists",
  indexes: [{ name: "watchlists_by_owner", properties: ["owner", "id"] }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    name: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type WatchlistRow = InferEntity<typeof WatchlistRow>;

/** An instrument on a watchlist: one row per pair, so adding twice changes nothing. */
export const WatchlistItemRow = defineEntity({
  name: "WatchlistItemRow",
  tableName: "watchlist_items",
  properties: {
    watchlistId: p.text().primary(),
    instrumentId: p.text().primary(),
    addedAt: p.datetime(),
  },
});
export type WatchlistItemRow = InferEntity<typeof WatchlistItemRow>;

/** An alert rule of a person; threshold rules keep their level as stated and as `numeric`. */
export const AlertRuleRow = defineEntity({
  name: "AlertRuleRow",
  tableName: "alert_rules",
  indexes: [
    { name: "alert_rules_by_owner", properties: ["owner", "id"] },
    { name: "alert_rules_by_instrument", properties: ["instrumentId", "kind"] },
  ],
  checks: [
    { name: "alert_rules_kind_check", expression: "kind in ('threshold', 'filing_type', 'new_document')" },
    { name: "alert_rules_direction_check", expression: "direction in ('up', 'down', 'either')" },
  ],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    instrumentId: p.text(),
    kind: p.text(),
    metric: p.text(),
    unit: p.text(),
    currency: p.text(),
    levelText: p.text(),
    level: p.decimal("string").columnType("numeric").nullable(),
    direction: p.text(),
    filingType: p.text(),
    createdAt: p.datetime(),
  },
});
export type AlertRuleRow = InferEntity<typeof AlertRuleRow>;

/** A delivery: at most one per (rule, triggering observation or document), the `trigger_id`. */
export const AlertDeliveryRow = defineEntity({
  name: "AlertDeliveryRow",
  tableName: "alert_deliveries",
  uniques: [{ name: "alert_deliveries_once", properties: ["ruleId", "triggerId"] }],
  indexes: [{ name: "alert_deliveries_by_owner", properties: ["owner", "id"] }],
  properties: {
    id: p.text().primary(),
    ruleId: p.text(),
    owner: p.text(),
    instrumentId: p.text(),
    kind: p.text(),
    triggerId: p.text(),
    metric: p.text(),
    unit: p.text(),
    currency: p.text(),
    previousValue: p.text(),
    value: p.text(),
    level: p.text(),
    direction: p.text(),
    deliveredAt: p.datetime(),
  },
});
export type AlertDeliveryRow = InferEntity<typeof AlertDeliveryRow>;

/** A sources item linked to an instrument (by CIK or ticker); a revision updates it in place. */
export const DocumentRow = defineEntity({
  name: "DocumentRow",
  tableName: "documents",
  uniques: [{ name: "documents_one_per_item", properties: ["instrumentId", "itemId"] }],
  indexes: [{ name: "documents_by_instrument", properties: ["instrumentId", "publishedAt"] }],
  properties: {
    id: p.text().primary(),
    instrumentId: p.text(),
    itemId: p.text(),
    sourceKey: p.text(),
    canonicalUrl: p.text(),
    title: p.text(),
    filingType: p.text(),
    publishedAt: p.datetime().nullable(),
    revision: p.integer(),
    receivedAt: p.datetime(),
    /** Set when sources removes the item: the document leaves the context input; deliveries made stay. */
    removedReason: p.text().nullable(),
    removedAt: p.datetime().nullable(),
  },
});
export type DocumentRow = InferEntity<typeof DocumentRow>;

/** A sources item removed upstream (sticky there): an item event arriving after its removal makes no document. */
export const RemovedItemRow = defineEntity({
  name: "RemovedItemRow",
  tableName: "removed_items",
  properties: {
    itemId: p.text().primary(),
    reason: p.text(),
    removedAt: p.datetime(),
  },
});
export type RemovedItemRow = InferEntity<typeof RemovedItemRow>;

export const entities = [
  InstrumentRow,
  InstrumentAliasRow,
  ObservationRow,
  WatchlistRow,
  WatchlistItemRow,
  AlertRuleRow,
  AlertDeliveryRow,
  DocumentRow,
  RemovedItemRow,
];
