import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A mod install. `requested` comes from the manifest and never changes;
 * `granted` only by explicit approval, and the database refuses a grant that
 * was not requested (`granted <@ requested`). One live (not revoked) install
 * per game, server scope and mod id.
 */
export const ModInstallRow = defineEntity({
  name: "ModInstallRow",
  tableName: "mod_installs",
  uniques: [{ name: "mod_installs_one_live", properties: ["game", "server", "modId"], where: "status <> 'revoked'" }],
  indexes: [
    { name: "mod_installs_by_scope", properties: ["game", "server", "id"] },
    { name: "mod_installs_by_mod", properties: ["game", "server", "modId", "version"] },
  ],
  checks: [
    { name: "mod_installs_status_check", expression: "status in ('disabled', 'enabled', 'revoked')" },
    {
      name: "mod_installs_trust_tier_check",
      expression: "trust_tier in ('unreviewed', 'community', 'verified', 'official')",
    },
    { name: "mod_installs_granted_requested", expression: "granted <@ requested" },
  ],
  properties: {
    id: p.text().primary(),
    modId: p.text(),
    name: p.text(),
    version: p.text(),
    game: p.text(),
    server: p.text(),
    status: p.text(),
    trustTier: p.text(),
    requested: p.array(),
    granted: p.array(),
    manifest: p.json<Record<string, unknown>>(),
    contentPack: p.json<Record<string, unknown>>(),
    contentDigest: p.text(),
    contentSize: p.integer(),
    revision: p.integer(),
    statusReason: p.text(),
    installedAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ModInstallRow = InferEntity<typeof ModInstallRow>;

/** One manage action that changed an install, with who did it; insert-only, one per revision. */
export const ModAuditRow = defineEntity({
  name: "ModAuditRow",
  tableName: "mod_audit",
  uniques: [{ name: "mod_audit_one_per_revision", properties: ["installId", "revision"] }],
  checks: [
    {
      name: "mod_audit_action_check",
      expression: "action in ('installed', 'enabled', 'disabled', 'granted', 'ungranted', 'revoked')",
    },
    { name: "mod_audit_admitted_by_check", expression: "admitted_by in ('capability', 'network_staff')" },
  ],
  properties: {
    id: p.text().primary(),
    installId: p.text(),
    revision: p.integer(),
    action: p.text(),
    capability: p.text(),
    actor: p.text(),
    actingFor: p.text(),
    admittedBy: p.text(),
    staffRole: p.text(),
    reason: p.text(),
    status: p.text(),
    at: p.datetime(),
  },
});
export type ModAuditRow = InferEntity<typeof ModAuditRow>;

export const entities = [ModInstallRow, ModAuditRow];
