import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** A canonical subject with its display projection. */
export const Subject = defineEntity({
  name: "Subject",
  tableName: "subjects",
  properties: {
    id: p.string().primary(),
    displayName: p.string().default(""),
    handle: p.string().default(""),
    avatarUrl: p.string().default(""),
    updatedAt: p.datetime(),
  },
});
export type Subject = InferEntity<typeof Subject>;

/** A legacy service-local id pointing at its canonical subject. */
export const LegacyId = defineEntity({
  name: "LegacyId",
  tableName: "legacy_ids",
  properties: {
    service: p.string().primary(),
    localId: p.string().primary(),
    subject: p.string(),
    createdAt: p.datetime(),
  },
});
export type LegacyId = InferEntity<typeof LegacyId>;

/** A staff entry: owner, admin or global moderator. */
export const StaffMember = defineEntity({
  name: "StaffMember",
  tableName: "staff",
  properties: {
    subject: p.string().primary(),
    role: p.string(),
    capabilities: p.array(),
    updatedAt: p.datetime(),
  },
});
export type StaffMember = InferEntity<typeof StaffMember>;

/** `blocker` blocked `blocked`. */
export const Block = defineEntity({
  name: "Block",
  tableName: "blocks",
  properties: {
    blocker: p.string().primary(),
    blocked: p.string().primary(),
    createdAt: p.datetime(),
  },
});
export type Block = InferEntity<typeof Block>;

/** One user's coins in one app; changes only together with a CoinEntry. */
export const CoinAccount = defineEntity({
  name: "CoinAccount",
  tableName: "coin_accounts",
  properties: {
    appId: p.string().primary(),
    subject: p.string().primary(),
    balance: p.bigint(),
    updatedAt: p.datetime(),
  },
});
export type CoinAccount = InferEntity<typeof CoinAccount>;

/** An immutable ledger entry of loyalty coins. */
export const CoinEntry = defineEntity({
  name: "CoinEntry",
  tableName: "coin_entries",
  properties: {
    id: p.string().primary(),
    appId: p.string(),
    subject: p.string(),
    delta: p.bigint(),
    balanceAfter: p.bigint(),
    reason: p.string(),
    transferId: p.string().nullable(),
    createdAt: p.datetime(),
  },
});
export type CoinEntry = InferEntity<typeof CoinEntry>;

/** A module record per namespace and subject, with its revision. */
export const ModuleRecord = defineEntity({
  name: "ModuleRecord",
  tableName: "module_records",
  properties: {
    namespace: p.string().primary(),
    subject: p.string().primary(),
    revision: p.bigint(),
    record: p.json<Record<string, unknown>>(),
    writtenBy: p.string(),
    updatedAt: p.datetime(),
  },
});
export type ModuleRecord = InferEntity<typeof ModuleRecord>;

/** A notification stored for one network user. */
export const Notification = defineEntity({
  name: "Notification",
  tableName: "notifications",
  properties: {
    id: p.string().primary(),
    recipient: p.string(),
    kind: p.string(),
    title: p.string(),
    body: p.string(),
    link: p.string(),
    actor: p.string(),
    payload: p.json<Record<string, unknown>>(),
    pushedBy: p.string(),
    createdAt: p.datetime(),
  },
});
export type Notification = InferEntity<typeof Notification>;

/** Owner settings (the code-hosting token, sealed). */
export const Setting = defineEntity({
  name: "Setting",
  tableName: "settings",
  properties: {
    name: p.string().primary(),
    value: p.text(),
    updatedAt: p.datetime(),
  },
});
export type Setting = InferEntity<typeof Setting>;

export const entities = [Subject, LegacyId, StaffMember, Block, CoinAccount, CoinEntry, ModuleRecord, Notification, Setting];
