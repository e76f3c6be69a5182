import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** A canonical subject with its display projection. */
export const Subject = defineEntity({
  name: "Subject",
  checks: [{ name: "subjects_id_check", expression: "id ~ '^(usr|gst)_[0-9a-z]+$'" }],
  tableName: "subjects",
  properties: {
    id: p.text().primary(),
    displayName: p.text().default(""),
    handle: p.text().default(""),
    avatarUrl: p.text().default(""),
    updatedAt: p.datetime(),
  },
});
export type Subject = InferEntity<typeof Subject>;

/** A legacy service-local id pointing at its canonical subject. */
export const LegacyId = defineEntity({
  name: "LegacyId",
  tableName: "legacy_ids",
  properties: {
    service: p.text().primary(),
    localId: p.text().primary(),
    subject: p.text(),
    createdAt: p.datetime(),
  },
});
export type LegacyId = InferEntity<typeof LegacyId>;

/** A staff entry: owner, admin or global moderator. */
export const StaffMember = defineEntity({
  name: "StaffMember",
  checks: [{ name: "staff_role_check", expression: "role in ('owner', 'admin', 'global_moderator')" }],
  uniques: [{ name: "staff_one_owner", properties: ["role"], where: "role = 'owner'" }],
  tableName: "staff",
  properties: {
    subject: p.text().primary(),
    role: p.text(),
    capabilities: p.array().defaultRaw("'{}'"),
    updatedAt: p.datetime(),
  },
});
export type StaffMember = InferEntity<typeof StaffMember>;

/** `blocker` blocked `blocked`. */
export const Block = defineEntity({
  name: "Block",
  indexes: [{ name: "blocks_by_blocked", properties: ["blocked", "blocker"] }],
  tableName: "blocks",
  properties: {
    blocker: p.text().primary(),
    blocked: p.text().primary(),
    createdAt: p.datetime(),
  },
});
export type Block = InferEntity<typeof Block>;

/** One user's coins in one app; changes only together with a CoinEntry. */
export const CoinAccount = defineEntity({
  name: "CoinAccount",
  checks: [{ name: "coin_accounts_balance_check", expression: "balance >= 0" }],
  tableName: "coin_accounts",
  properties: {
    appId: p.text().primary(),
    subject: p.text().primary(),
    balance: p.bigint(),
    updatedAt: p.datetime(),
  },
});
export type CoinAccount = InferEntity<typeof CoinAccount>;

/** An immutable ledger entry of loyalty coins. */
export const CoinEntry = defineEntity({
  name: "CoinEntry",
  checks: [
    { name: "coin_entries_delta_check", expression: "delta <> 0" },
    { name: "coin_entries_balance_after_check", expression: "balance_after >= 0" },
  ],
  indexes: [{ name: "coin_entries_by_account", properties: ["appId", "subject", "id"] }],
  tableName: "coin_entries",
  properties: {
    id: p.text().primary(),
    appId: p.text(),
    subject: p.text(),
    delta: p.bigint(),
    balanceAfter: p.bigint(),
    reason: p.text(),
    transferId: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type CoinEntry = InferEntity<typeof CoinEntry>;

/** A module record per namespace and subject, with its revision. */
export const ModuleRecord = defineEntity({
  name: "ModuleRecord",
  checks: [{ name: "module_records_revision_check", expression: "revision >= 1" }],
  tableName: "module_records",
  properties: {
    namespace: p.text().primary(),
    subject: p.text().primary(),
    revision: p.bigint(),
    record: p.json<Record<string, unknown>>(),
    writtenBy: p.text(),
    updatedAt: p.datetime(),
  },
});
export type ModuleRecord = InferEntity<typeof ModuleRecord>;

/** A notification stored for one network user. */
export const Notification = defineEntity({
  name: "Notification",
  indexes: [{ name: "notifications_by_recipient", properties: ["recipient", "id"] }],
  tableName: "notifications",
  properties: {
    id: p.text().primary(),
    recipient: p.text(),
    kind: p.text(),
    title: p.text(),
    body: p.text(),
    link: p.text(),
    actor: p.text(),
    payload: p.json<Record<string, unknown>>(),
    pushedBy: p.text(),
    createdAt: p.datetime(),
  },
});
export type Notification = InferEntity<typeof Notification>;

/** Owner settings (the code-hosting token, sealed). */
export const Setting = defineEntity({
  name: "Setting",
  tableName: "settings",
  properties: {
    name: p.text().primary(),
    value: p.text(),
    updatedAt: p.datetime(),
  },
});
export type Setting = InferEntity<typeof Setting>;

export const entities = [
  Subject,
  LegacyId,
  StaffMember,
  Block,
  CoinAccount,
  CoinEntry,
  ModuleRecord,
  Notification,
  Setting,
];
