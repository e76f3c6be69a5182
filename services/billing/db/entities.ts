import { defineEntity, p, type InferEntity, type TriggerDef } from "@mikro-orm/postgresql";
import { SYSTEM_KINDS } from "../domain/ledger.js";
import { IMMUTABLE } from "./migrations/Migration20261122100000_billing.js";

/** Ledger rows are insert-only. */
const immutable = (table: string): TriggerDef => ({
  name: `${table}_immutable`,
  timing: "before",
  events: ["update", "delete"],
  forEach: "row",
  body: IMMUTABLE,
});

/** The system kinds as an SQL list, for the checks and statements that tell them apart from subjects' kinds. */
export const SYSTEM_KINDS_SQL = SYSTEM_KINDS.map((kind) => `'${kind}'`).join(", ");
const currency = { name: "", expression: "currency ~ '^[A-Z]{3}$'" };
const currencyCheck = (table: string) => ({ ...currency, name: `${table}_currency_check` });

/** One balance of one owner in one currency; changes only together with its entries (see db/ledger.ts). */
export const Account = defineEntity({
  name: "Account",
  tableName: "accounts",
  checks: [
    {
      name: "accounts_kind_check",
      expression: `kind in ('credit', 'payable', 'pending_payout', 'import_hold', ${SYSTEM_KINDS_SQL})`,
    },
    currencyCheck("accounts"),
    { name: "accounts_balance_check", expression: `balance >= 0 or kind in (${SYSTEM_KINDS_SQL})` },
  ],
  properties: {
    owner: p.text().primary(),
    kind: p.text().primary(),
    currency: p.text().primary(),
    balance: p.bigint(),
    updatedAt: p.datetime(),
  },
});
export type Account = InferEntity<typeof Account>;

/** A balanced ledger transaction; insert-only (a trigger refuses updates and deletes). */
export const LedgerTransactionRow = defineEntity({
  name: "LedgerTransactionRow",
  tableName: "transactions",
  triggers: [immutable("transactions")],
  checks: [
    {
      name: "transactions_kind_check",
      expression: `kind in ('purchase', 'transfer', 'subscription', 'cashout_request', 'cashout_approval', 'cashout_denial', 'recycle', 'adjustment', 'import_hold', 'import_release')`,
    },
  ],
  properties: {
    id: p.text().primary(),
    kind: p.text(),
    reason: p.text().default(""),
    referenceService: p.text().default(""),
    referenceKind: p.text().default(""),
    referenceId: p.text().default(""),
    createdBy: p.text(),
    createdAt: p.datetime(),
  },
});
export type LedgerTransactionRow = InferEntity<typeof LedgerTransactionRow>;

/** One immutable entry: the signed change of one account, written with its transaction's other entries. */
export const Entry = defineEntity({
  name: "Entry",
  tableName: "entries",
  triggers: [
    immutable("entries"),
    // Written by the migration (a statement trigger over the inserted rows): every transaction balances per currency.
    {
      name: "entries_balanced",
      timing: "after",
      events: ["insert"],
      forEach: "statement",
      expression: "entries_balanced",
    },
  ],
  checks: [{ name: "entries_amount_check", expression: "amount <> 0" }],
  indexes: [
    { name: "entries_by_transaction", properties: ["transaction"] },
    { name: "entries_by_owner", properties: ["owner", "transaction"] },
  ],
  properties: {
    seq: p.bigint().primary().autoincrement(),
    transaction: () => p.manyToOne(LedgerTransactionRow).fieldName("transaction_id"),
    owner: p.text(),
    kind: p.text(),
    currency: p.text(),
    amount: p.bigint(),
    balanceAfter: p.bigint(),
    createdAt: p.datetime(),
  },
});
export type Entry = InferEntity<typeof Entry>;

/** The economy freeze switch: one row. */
export const EconomyRow = defineEntity({
  name: "EconomyRow",
  tableName: "economy",
  checks: [{ name: "economy_id_check", expression: "id = 1" }],
  properties: {
    id: p.smallint().primary().autoincrement(false),
    frozen: p.boolean(),
    reason: p.text().default(""),
    changedBy: p.text().default(""),
    changedAt: p.datetime(),
  },
});
export type EconomyRow = InferEntity<typeof EconomyRow>;

/** A payment intent, priced by billing. */
export const IntentRow = defineEntity({
  name: "IntentRow",
  tableName: "intents",
  checks: [
    { name: "intents_status_check", expression: "status in ('requires_action', 'approved', 'settled', 'declined')" },
    { name: "intents_product_check", expression: "product in ('credit', 'channel_subscription', 'tip')" },
    currencyCheck("intents"),
    { name: "intents_price_check", expression: "price > 0" },
    { name: "intents_credit_granted_check", expression: "credit_granted >= 0" },
    { name: "intents_checkout_check", expression: "checkout in ('web', 'app')" },
    { name: "intents_settled_check", expression: "(status = 'settled') = (transaction_id is not null)" },
  ],
  uniques: [{ name: "intents_by_order", properties: ["provider", "providerOrderId"] }],
  indexes: [{ name: "intents_by_subject", properties: ["subject", "id"] }],
  properties: {
    id: p.text().primary(),
    subject: p.text(),
    status: p.text(),
    product: p.text(),
    pack: p.text().default(""),
    /** The payee: the streamer of a channel subscription, the creator of a tip. */
    streamer: p.text().default(""),
    planId: p.text().default(""),
    planVersion: p.bigint(),
    tier: p.text().default(""),
    currency: p.text(),
    price: p.bigint(),
    creditGranted: p.bigint(),
    checkout: p.text(),
    provider: p.text(),
    providerOrderId: p.text(),
    checkoutUrl: p.text().default(""),
    appReference: p.text().default(""),
    returnUrl: p.text().default(""),
    referenceService: p.text().default(""),
    referenceKind: p.text().default(""),
    referenceId: p.text().default(""),
    transactionId: p.text().nullable(),
    subscriptionId: p.text().nullable(),
    declineReason: p.text().default(""),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    settledAt: p.datetime().nullable(),
  },
});
export type IntentRow = InferEntity<typeof IntentRow>;

/** A provider event, stored once per (provider, provider_event_id) and applied in `seq` order. */
export const ProviderEventRow = defineEntity({
  name: "ProviderEventRow",
  tableName: "provider_events",
  checks: [
    {
      name: "provider_events_status_check",
      expression: "status in ('pending', 'held', 'applied', 'ignored', 'failed')",
    },
  ],
  uniques: [
    { name: "provider_events_once", properties: ["provider", "providerEventId"] },
    { name: "provider_events_by_seq", properties: ["seq"] },
  ],
  properties: {
    id: p.text().primary(),
    seq: p.bigint().autoincrement(),
    provider: p.text(),
    providerEventId: p.text(),
    type: p.text(),
    providerOrderId: p.text().default(""),
    payload: p.text(),
    status: p.text(),
    deliveries: p.integer().default(1),
    detail: p.text().default(""),
    receivedAt: p.datetime(),
    appliedAt: p.datetime().nullable(),
  },
});
export type ProviderEventRow = InferEntity<typeof ProviderEventRow>;

/** A cashout of creator payable, in escrow until decided. */
export const CashoutRow = defineEntity({
  name: "CashoutRow",
  tableName: "cashouts",
  checks: [
    currencyCheck("cashouts"),
    { name: "cashouts_amount_check", expression: "amount > 0" },
    { name: "cashouts_status_check", expression: "status in ('requested', 'approved', 'denied')" },
    { name: "cashouts_approval_check", expression: "status <> 'approved' or payout_reference <> ''" },
  ],
  indexes: [
    { name: "cashouts_by_subject", properties: ["subject", "id"] },
    { name: "cashouts_by_status", properties: ["status", "id"] },
  ],
  properties: {
    id: p.text().primary(),
    subject: p.text(),
    currency: p.text(),
    amount: p.bigint(),
    status: p.text(),
    escrowUntil: p.datetime(),
    payoutReference: p.text().default(""),
    reason: p.text().default(""),
    decidedBy: p.text().default(""),
    requestTransactionId: p.text(),
    decisionTransactionId: p.text().nullable(),
    createdAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
  },
});
export type CashoutRow = InferEntity<typeof CashoutRow>;

/** A subscriber's channel subscription to a streamer. */
export const SubscriptionRow = defineEntity({
  name: "SubscriptionRow",
  tableName: "subscriptions",
  checks: [
    currencyCheck("subscriptions"),
    { name: "subscriptions_price_check", expression: "price > 0" },
    { name: "subscriptions_status_check", expression: "status in ('active', 'canceled', 'ended')" },
    { name: "subscriptions_paid_via_check", expression: "paid_via in ('credit', 'intent')" },
  ],
  uniques: [{ name: "subscriptions_one_current", properties: ["subject", "streamer"], where: "status <> 'ended'" }],
  indexes: [
    { name: "subscriptions_due", properties: ["validUntil"], where: "status <> 'ended'" },
    { name: "subscriptions_by_streamer", properties: ["streamer", "id"] },
  ],
  properties: {
    id: p.text().primary(),
    subject: p.text(),
    streamer: p.text(),
    planId: p.text(),
    planVersion: p.bigint(),
    tier: p.text(),
    currency: p.text(),
    price: p.bigint(),
    status: p.text(),
    paidVia: p.text(),
    validUntil: p.datetime(),
    startedAt: p.datetime(),
    endedAt: p.datetime().nullable(),
    periods: p.integer().default(1),
    updatedAt: p.datetime(),
  },
});
export type SubscriptionRow = InferEntity<typeof SubscriptionRow>;

/** An imported balance held until a ledger admin releases it. */
export const ImportHoldRow = defineEntity({
  name: "ImportHoldRow",
  tableName: "import_holds",
  checks: [
    { name: "import_holds_release_to_check", expression: "release_to in ('credit', 'payable')" },
    currencyCheck("import_holds"),
    { name: "import_holds_amount_check", expression: "amount > 0" },
    { name: "import_holds_status_check", expression: "status in ('held', 'released')" },
  ],
  properties: {
    id: p.text().primary(),
    subject: p.text(),
    releaseTo: p.text(),
    currency: p.text(),
    amount: p.bigint(),
    sourceRef: p.text().default(""),
    reason: p.text(),
    status: p.text(),
    holdTransactionId: p.text(),
    releaseTransactionId: p.text().nullable(),
    createdAt: p.datetime(),
    releasedAt: p.datetime().nullable(),
    releasedBy: p.text().default(""),
  },
});
export type ImportHoldRow = InferEntity<typeof ImportHoldRow>;

/** A reconciliation run and its report (the Reconciliation message as proto JSON). */
export const ReconciliationRow = defineEntity({
  name: "ReconciliationRow",
  tableName: "reconciliations",
  properties: {
    id: p.text().primary(),
    ranAt: p.datetime(),
    ranBy: p.text(),
    balanced: p.boolean(),
    report: p.json(),
  },
});
export type ReconciliationRow = InferEntity<typeof ReconciliationRow>;

/**
 * What one operation of a service consumed (designed metering: run's jobs in wall-clock seconds): insert-only, one
 * per service, operation and reference, so a retry records nothing twice. No money moves: the spec gives no price.
 */
export const UsageRow = defineEntity({
  name: "UsageRow",
  tableName: "usage_records",
  triggers: [immutable("usage_records")],
  uniques: [{ name: "usage_records_once", properties: ["service", "operation", "reference"] }],
  checks: [{ name: "usage_records_quantity_check", expression: "quantity >= 0" }],
  properties: {
    id: p.text().primary(),
    service: p.text(),
    operation: p.text(),
    unit: p.text(),
    quantity: p.bigint(),
    projectId: p.text(),
    reference: p.text(),
    payer: p.text(),
    recordedAt: p.datetime(),
  },
});
export type UsageRow = InferEntity<typeof UsageRow>;

export const entities = [
  Account,
  LedgerTransactionRow,
  Entry,
  EconomyRow,
  IntentRow,
  ProviderEventRow,
  CashoutRow,
  SubscriptionRow,
  ImportHoldRow,
  ReconciliationRow,
  UsageRow,
];
