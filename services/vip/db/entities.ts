import { defineEntity, p, type InferEntity, type TriggerDef } from "@mikro-orm/postgresql";
import { IMMUTABLE } from "./migrations/Migration20261124000000_vip.js";

/** Plan versions and their publications are insert-only: a trigger refuses updates and deletes. */
const immutable = (table: string): TriggerDef => ({
  name: `${table}_immutable`,
  timing: "before",
  events: ["update", "delete"],
  forEach: "row",
  body: IMMUTABLE,
});

/** A plan: its status and the pointers to its current and draft versions (the terms live in plan_versions). */
export const PlanRow = defineEntity({
  name: "PlanRow",
  tableName: "plans",
  checks: [{ name: "plans_status_check", expression: "status in ('draft', 'published', 'archived')" }],
  indexes: [{ name: "plans_by_owner", properties: ["owner", "id"] }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    status: p.text(),
    currentVersion: p.integer().nullable(),
    draftVersion: p.integer().nullable(),
    latestVersion: p.integer(),
    revision: p.bigint(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
    archivedAt: p.datetime().nullable(),
  },
});
export type PlanRow = InferEntity<typeof PlanRow>;

/** One version of a plan: its terms, never changed once written. */
export const PlanVersionRow = defineEntity({
  name: "PlanVersionRow",
  tableName: "plan_versions",
  triggers: [immutable("plan_versions")],
  checks: [{ name: "plan_versions_version_check", expression: "version >= 1" }],
  properties: {
    planId: p.text().primary(),
    version: p.integer().primary(),
    name: p.text(),
    description: p.text(),
    tier: p.text(),
    perkIds: p.json<string[]>(),
    createdBy: p.text(),
    createdAt: p.datetime(),
  },
});
export type PlanVersionRow = InferEntity<typeof PlanVersionRow>;

/** A version's publication, with the snapshot of its perks as they were then; never changed once written. */
export const PublicationRow = defineEntity({
  name: "PublicationRow",
  tableName: "plan_publications",
  triggers: [immutable("plan_publications")],
  properties: {
    planId: p.text().primary(),
    version: p.integer().primary(),
    perks: p.json<SnapshotPerk[]>(),
    publishedBy: p.text(),
    publishedAt: p.datetime(),
  },
});
export type PublicationRow = InferEntity<typeof PublicationRow>;

/** A perk as a publication keeps it. */
export interface SnapshotPerk {
  id: string;
  kind: string;
  name: string;
  description: string;
  productBindings: { service: string; kind: string; id: string }[];
}

/** A perk of a creator or of the network. */
export const PerkRow = defineEntity({
  name: "PerkRow",
  tableName: "perks",
  checks: [
    { name: "perks_kind_check", expression: "kind in ('badge', 'emote', 'gated_content', 'room', 'role')" },
    { name: "perks_status_check", expression: "status in ('active', 'retired')" },
  ],
  indexes: [{ name: "perks_by_owner", properties: ["owner", "id"] }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    kind: p.text(),
    name: p.text(),
    description: p.text(),
    productBindings: p.json<SnapshotPerk["productBindings"]>(),
    status: p.text(),
    revision: p.bigint(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    retiredAt: p.datetime().nullable(),
  },
});
export type PerkRow = InferEntity<typeof PerkRow>;

/** A member's checkout of a plan version, with the member's preferences. */
export const MembershipRow = defineEntity({
  name: "MembershipRow",
  tableName: "memberships",
  checks: [{ name: "memberships_paid_via_check", expression: "paid_via in ('intent', 'credit')" }],
  indexes: [
    { name: "memberships_by_member", properties: ["member", "id"] },
    { name: "memberships_by_creator", properties: ["creator", "id"] },
  ],
  properties: {
    id: p.text().primary(),
    member: p.text(),
    creator: p.text(),
    planId: p.text(),
    planVersion: p.integer(),
    preferences: p.json<{ announce: boolean; notifications: boolean }>(),
    paidVia: p.text(),
    intentId: p.text().nullable(),
    subscriptionId: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type MembershipRow = InferEntity<typeof MembershipRow>;

/**
 * The projection of billing entitlements, one row per subscriber and channel:
 * fed by billing.entitlement.changed and refreshed by direct checks.
 */
export const EntitlementRow = defineEntity({
  name: "EntitlementRow",
  tableName: "entitlements",
  checks: [{ name: "entitlements_status_check", expression: "status in ('active', 'canceled', 'ended', 'none')" }],
  indexes: [{ name: "entitlements_by_streamer", properties: ["streamer", "validUntil"] }],
  properties: {
    subject: p.text().primary(),
    streamer: p.text().primary(),
    subscriptionId: p.text(),
    planId: p.text(),
    planVersion: p.integer(),
    status: p.text(),
    validUntil: p.datetime().nullable(),
    /** The time of billing's fact (event or answer): an older one never overwrites a newer one. */
    observedAt: p.datetime(),
    /** When this service last learned it (freshness). */
    refreshedAt: p.datetime(),
  },
});
export type EntitlementRow = InferEntity<typeof EntitlementRow>;

/** The rule gating one resource for a creator. */
export const PolicyRow = defineEntity({
  name: "PolicyRow",
  tableName: "policies",
  checks: [{ name: "policies_rule_check", expression: "rule in ('any_member', 'plan_member', 'perk_holder')" }],
  uniques: [{ name: "policies_one_per_resource", properties: ["resourceService", "resourceKind", "resourceId"] }],
  indexes: [{ name: "policies_by_creator", properties: ["creator", "id"] }],
  properties: {
    id: p.text().primary(),
    creator: p.text(),
    resourceService: p.text(),
    resourceKind: p.text(),
    resourceId: p.text(),
    rule: p.text(),
    planId: p.text().nullable(),
    perkId: p.text().nullable(),
    alwaysCheckBilling: p.boolean(),
    setBy: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type PolicyRow = InferEntity<typeof PolicyRow>;

export const entities = [PlanRow, PlanVersionRow, PublicationRow, PerkRow, MembershipRow, EntitlementRow, PolicyRow];
