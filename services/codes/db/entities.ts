import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A release of an app or mod. `version_key` is the version without build
 * metadata: unique per app. `published_at` stays null for a release never
 * published, which no read returns (a draft revoked unpublished included).
 */
export const ReleaseRow = defineEntity({
  name: "ReleaseRow",
  tableName: "releases",
  uniques: [{ name: "releases_version_per_app", properties: ["app", "versionKey"] }],
  indexes: [{ name: "releases_by_app", properties: ["app", "id"] }],
  checks: [
    { name: "releases_kind_check", expression: "kind in ('app', 'mod')" },
    { name: "releases_status_check", expression: "status in ('draft', 'published', 'deprecated', 'revoked')" },
  ],
  properties: {
    id: p.text().primary(),
    app: p.text(),
    kind: p.text(),
    version: p.text(),
    versionKey: p.text(),
    compatibility: p.text(),
    manifest: p.json<Record<string, unknown>>(),
    status: p.text(),
    deprecationReason: p.text().nullable(),
    replacement: p.text().nullable(),
    revocationReason: p.text().nullable(),
    createdAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
    deprecatedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});
export type ReleaseRow = InferEntity<typeof ReleaseRow>;

/** An app's trust tier as staff set it; an app without a row is unreviewed. Metadata: nothing reads it to decide. */
export const AppTrustRow = defineEntity({
  name: "AppTrustRow",
  tableName: "app_trust",
  checks: [{ name: "app_trust_tier_check", expression: "tier in ('unreviewed', 'reviewed', 'verified', 'flagged')" }],
  properties: {
    app: p.text().primary(),
    tier: p.text(),
    note: p.text(),
    setBy: p.text(),
    updatedAt: p.datetime(),
  },
});
export type AppTrustRow = InferEntity<typeof AppTrustRow>;

export const entities = [ReleaseRow, AppTrustRow];
