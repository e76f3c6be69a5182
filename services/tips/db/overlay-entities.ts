import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** An overlay config: one section of settings (alerts or goals) as proto JSON, under an optimistic revision. */
export const OverlayConfigRow = defineEntity({
  name: "OverlayConfigRow",
  tableName: "overlay_configs",
  checks: [{ name: "overlay_configs_kind_check", expression: "kind in ('alerts', 'goals')" }],
  indexes: [{ name: "overlay_configs_by_creator", properties: ["creator", "id"] }],
  properties: {
    id: p.text().primary(),
    creator: p.text(),
    kind: p.text(),
    name: p.text(),
    settings: p.json<Record<string, unknown>>(),
    revision: p.bigint(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type OverlayConfigRow = InferEntity<typeof OverlayConfigRow>;

/** An overlay token: only the SHA-256 of its secret is kept (the secret is shown once) and its last four characters. */
export const OverlayTokenRow = defineEntity({
  name: "OverlayTokenRow",
  tableName: "overlay_tokens",
  checks: [{ name: "overlay_tokens_scope_check", expression: "scope_alerts or scope_goals" }],
  uniques: [{ name: "overlay_tokens_secret_hash_unique", properties: ["secretHash"] }],
  indexes: [{ name: "overlay_tokens_by_creator", properties: ["creator", "id"] }],
  properties: {
    id: p.text().primary(),
    creator: p.text(),
    scopeAlerts: p.boolean(),
    scopeGoals: p.boolean(),
    label: p.text(),
    secretHash: p.text(),
    secretHint: p.text(),
    createdAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});
export type OverlayTokenRow = InferEntity<typeof OverlayTokenRow>;

/**
 * The overlays' view of settled interactions, for resuming a stream: the
 * alert as proto JSON, whether it is hidden, and the id of the event that
 * last showed it (settled or restored), which the stream sent as its SSE id.
 */
export const OverlayAlertRow = defineEntity({
  name: "OverlayAlertRow",
  tableName: "overlay_alerts",
  indexes: [{ name: "overlay_alerts_by_creator", properties: ["creator", "eventId"] }],
  properties: {
    interactionId: p.text().primary(),
    creator: p.text(),
    eventId: p.text(),
    alert: p.json<Record<string, unknown>>(),
    hidden: p.boolean(),
    shownAt: p.datetime(),
  },
});
export type OverlayAlertRow = InferEntity<typeof OverlayAlertRow>;

/** The overlays' view of goals: each goal's progress as last published, for the first events of a stream. */
export const OverlayGoalRow = defineEntity({
  name: "OverlayGoalRow",
  tableName: "overlay_goals",
  indexes: [{ name: "overlay_goals_by_creator", properties: ["creator"] }],
  properties: {
    goalId: p.text().primary(),
    creator: p.text(),
    goal: p.json<Record<string, unknown>>(),
    updatedAt: p.datetime(),
  },
});
export type OverlayGoalRow = InferEntity<typeof OverlayGoalRow>;

export const overlayEntities = [OverlayConfigRow, OverlayTokenRow, OverlayAlertRow, OverlayGoalRow];
