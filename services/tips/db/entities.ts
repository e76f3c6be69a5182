import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

const currency = (table: string, column = "currency") => ({
  name: `${table}_${column}_check`,
  expression: `${column} ~ '^[A-Z]{3}$'`,
});

/** A creator's tip profile: the switches as columns, the rest (minimums, TTS, media, word filter, moderators) as one document. */
export const ProfileRow = defineEntity({
  name: "ProfileRow",
  tableName: "profiles",
  properties: {
    creator: p.text().primary(),
    pageEnabled: p.boolean(),
    accepting: p.boolean(),
    /** The Profile's sub-messages as proto JSON. */
    settings: p.json<Record<string, unknown>>(),
    revision: p.bigint(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ProfileRow = InferEntity<typeof ProfileRow>;

/** A creator's goal; its total is derived from settled interactions on every read. */
export const GoalRow = defineEntity({
  name: "GoalRow",
  tableName: "goals",
  checks: [currency("goals"), { name: "goals_target_check", expression: "target > 0" }],
  indexes: [{ name: "goals_by_creator", properties: ["creator", "position"] }],
  properties: {
    id: p.text().primary(),
    creator: p.text(),
    title: p.text(),
    description: p.text().default(""),
    imageUrl: p.text().default(""),
    position: p.integer(),
    public: p.boolean(),
    currency: p.text(),
    target: p.bigint(),
    revision: p.bigint(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    closedAt: p.datetime().nullable(),
  },
});
export type GoalRow = InferEntity<typeof GoalRow>;

/**
 * The payment of a tip, paid message or media request, from its start: once
 * per (supporter, Idempotency-Key), the key kept with the kit's idempotency
 * keys. A paid message's interaction row is made only when this settles; tips
 * and media requests have theirs from the start.
 */
export const CheckoutRow = defineEntity({
  name: "CheckoutRow",
  tableName: "checkouts",
  checks: [
    currency("checkouts"),
    { name: "checkouts_kind_check", expression: "kind in ('tip', 'paid_message', 'media_request')" },
    { name: "checkouts_method_check", expression: "method in ('credit', 'intent')" },
    { name: "checkouts_payment_state_check", expression: "payment_state in ('pending', 'settled', 'declined')" },
    { name: "checkouts_amount_check", expression: "amount > 0" },
  ],
  uniques: [{ name: "checkouts_by_intent", properties: ["intentId"] }],
  indexes: [{ name: "checkouts_pending", properties: ["createdAt"], where: "payment_state = 'pending'" }],
  properties: {
    id: p.text().primary(),
    supporter: p.text(),
    creator: p.text(),
    kind: p.text(),
    currency: p.text(),
    amount: p.bigint(),
    message: p.text().default(""),
    goalId: p.text().nullable(),
    mediaUrl: p.text().default(""),
    mediaSeconds: p.integer().default(0),
    method: p.text(),
    returnUrl: p.text().default(""),
    paymentState: p.text(),
    intentId: p.text().nullable(),
    checkoutUrl: p.text().default(""),
    transactionId: p.text().nullable(),
    declineReason: p.text().default(""),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    settledAt: p.datetime().nullable(),
  },
});
export type CheckoutRow = InferEntity<typeof CheckoutRow>;

/**
 * An interaction: payment state (from billing) and delivery state (effects)
 * kept apart. External ones are unique per (provider, provider_ref).
 */
export const InteractionRow = defineEntity({
  name: "InteractionRow",
  tableName: "interactions",
  checks: [
    currency("interactions"),
    { name: "interactions_kind_check", expression: "kind in ('tip', 'paid_message', 'media_request', 'external')" },
    { name: "interactions_method_check", expression: "method in ('credit', 'intent', 'external')" },
    {
      name: "interactions_payment_state_check",
      expression: "payment_state in ('pending', 'settled', 'declined', 'external')",
    },
    {
      name: "interactions_delivery_state_check",
      expression: "delivery_state in ('pending', 'queued', 'delivered', 'suppressed', 'canceled')",
    },
    { name: "interactions_moderation_check", expression: "moderation in ('visible', 'hidden', 'held')" },
    {
      name: "interactions_external_check",
      expression: "(kind = 'external') = (provider is not null and provider_ref is not null)",
    },
    { name: "interactions_amount_check", expression: "amount > 0" },
  ],
  uniques: [{ name: "interactions_external_once", properties: ["provider", "providerRef"] }],
  indexes: [
    { name: "interactions_by_creator", properties: ["creator", "id"] },
    { name: "interactions_by_supporter", properties: ["supporter", "id"] },
    { name: "interactions_by_goal", properties: ["goalId"], where: "payment_state in ('settled', 'external')" },
  ],
  properties: {
    id: p.text().primary(),
    creator: p.text(),
    supporter: p.text().default(""),
    kind: p.text(),
    currency: p.text(),
    amount: p.bigint(),
    message: p.text().default(""),
    goalId: p.text().nullable(),
    mediaUrl: p.text().default(""),
    mediaSeconds: p.integer().default(0),
    method: p.text(),
    paymentState: p.text(),
    deliveryState: p.text(),
    moderation: p.text(),
    intentId: p.text().nullable(),
    transactionId: p.text().nullable(),
    provider: p.text().nullable(),
    providerRef: p.text().nullable(),
    supporterName: p.text().default(""),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    settledAt: p.datetime().nullable(),
  },
});
export type InteractionRow = InferEntity<typeof InteractionRow>;

/** One hide, hold or restore of a paid message: the moderation log, never changed. */
export const ModerationRow = defineEntity({
  name: "ModerationRow",
  tableName: "moderation_records",
  checks: [{ name: "moderation_records_action_check", expression: "action in ('hide', 'restore', 'hold')" }],
  indexes: [{ name: "moderation_records_by_creator", properties: ["creator", "id"] }],
  properties: {
    id: p.text().primary(),
    interactionId: p.text(),
    creator: p.text(),
    action: p.text(),
    actor: p.text(),
    relayedBy: p.text().default(""),
    reason: p.text().default(""),
    createdAt: p.datetime(),
  },
});
export type ModerationRow = InferEntity<typeof ModerationRow>;

export const entities = [ProfileRow, GoalRow, CheckoutRow, InteractionRow, ModerationRow];
