import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

const KINDS = "'manual', 'rss', 'atom', 'json_feed', 'html_page', 'json_api'";

/**
 * A registered source. Fetched kinds carry a URL and its host (the per-host politeness key); the credential is an
 * environment variable's name only. Health (last success, attempt, failures) and the conditional-GET validators of
 * the last success are kept here by the run that changed them.
 */
export const SourceRow = defineEntity({
  name: "SourceRow",
  tableName: "sources",
  checks: [
    { name: "sources_kind_check", expression: `kind in (${KINDS})` },
    { name: "sources_url_check", expression: "(kind = 'manual') = (url is null)" },
    { name: "sources_credential_scheme_check", expression: "credential_scheme in ('bearer', 'header', 'basic')" },
  ],
  indexes: [{ name: "sources_due", properties: ["nextFetchAt"], where: "enabled and kind <> 'manual'" }],
  properties: {
    key: p.text().primary(),
    kind: p.text(),
    url: p.text().nullable(),
    host: p.text().nullable(),
    title: p.text(),
    enabled: p.boolean(),
    termsNote: p.text(),
    robotsNote: p.text(),
    credentialVariable: p.text().nullable(),
    credentialScheme: p.text().nullable(),
    credentialHeader: p.text().nullable(),
    fetchIntervalSeconds: p.integer(),
    nextFetchAt: p.datetime().nullable(),
    etag: p.text().nullable(),
    lastModified: p.text().nullable(),
    lastSuccessAt: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    consecutiveFailures: p.integer(),
    lastFailureClass: p.text().nullable(),
    staleReported: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type SourceRow = InferEntity<typeof SourceRow>;

/**
 * A source item at its latest revision, with that revision's provenance. Its identity (source and external id, or
 * canonical URL) is unique, so a refetch or a crash never duplicates it; removal is sticky (removed_at never cleared).
 */
export const ItemRow = defineEntity({
  name: "ItemRow",
  tableName: "items",
  uniques: [
    { name: "items_identity", properties: ["sourceKey", "identity"] },
    { name: "items_change_order", properties: ["changeOrder"] },
  ],
  properties: {
    id: p.text().primary(),
    sourceKey: p.text(),
    identity: p.text(),
    canonicalUrl: p.text(),
    externalId: p.text(),
    title: p.text(),
    summary: p.text(),
    content: p.text(),
    publishedAt: p.datetime().nullable(),
    identifiers: p.json<Record<string, string>>(),
    filingType: p.text(),
    evidenceUrl: p.text(),
    revision: p.integer(),
    changeOrder: p.bigint(),
    contentHash: p.text(),
    rawBodyHash: p.text(),
    parserVersion: p.text(),
    retrievedAt: p.datetime(),
    terms: p.text(),
    removedAt: p.datetime().nullable(),
    removedReason: p.text().nullable(),
    removedBy: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type ItemRow = InferEntity<typeof ItemRow>;

/** One revision of an item, insert-only: a new one only when the content hash changes. */
export const ItemRevisionRow = defineEntity({
  name: "ItemRevisionRow",
  tableName: "item_revisions",
  properties: {
    itemId: p.text().primary(),
    revision: p.integer().primary(),
    canonicalUrl: p.text(),
    title: p.text(),
    summary: p.text(),
    content: p.text(),
    publishedAt: p.datetime().nullable(),
    identifiers: p.json<Record<string, string>>(),
    filingType: p.text(),
    changeOrder: p.bigint(),
    contentHash: p.text(),
    rawBodyHash: p.text(),
    parserVersion: p.text(),
    retrievedAt: p.datetime(),
    terms: p.text(),
  },
});
export type ItemRevisionRow = InferEntity<typeof ItemRevisionRow>;

/**
 * One fetch attempt. At most one queued or running run per source; a running run holds a lease its worker renews,
 * and the reaper ends one whose lease lapsed as failed/abandoned.
 */
export const FetchRunRow = defineEntity({
  name: "FetchRunRow",
  tableName: "fetch_runs",
  checks: [
    {
      name: "fetch_runs_state_check",
      expression: "state in ('queued', 'running', 'succeeded', 'not_modified', 'failed')",
    },
    { name: "fetch_runs_trigger_check", expression: "trigger in ('schedule', 'manual')" },
    { name: "fetch_runs_failure_check", expression: "(state = 'failed') = (failure_class is not null)" },
  ],
  uniques: [{ name: "fetch_runs_one_active", properties: ["sourceKey"], where: "state in ('queued', 'running')" }],
  indexes: [
    { name: "fetch_runs_queue", properties: ["queuedAt"], where: "state = 'queued'" },
    { name: "fetch_runs_by_time", properties: ["queuedAt", "id"] },
    { name: "fetch_runs_by_source", properties: ["sourceKey", "queuedAt", "id"] },
  ],
  properties: {
    id: p.text().primary(),
    sourceKey: p.text(),
    state: p.text(),
    failureClass: p.text().nullable(),
    failureDetail: p.text(),
    trigger: p.text(),
    queuedAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
    leaseUntil: p.datetime().nullable(),
    worker: p.text().nullable(),
    httpStatus: p.integer().nullable(),
    bytes: p.bigint(),
    itemsNew: p.integer(),
    itemsRevised: p.integer(),
    itemsUnchanged: p.integer(),
    itemsSkippedRemoved: p.integer(),
    entriesSkipped: p.integer(),
  },
});
export type FetchRunRow = InferEntity<typeof FetchRunRow>;

/** The last change order given: one row, locked for update by each item change so commits come in order. */
export const ChangeCounterRow = defineEntity({
  name: "ChangeCounterRow",
  tableName: "change_counter",
  checks: [{ name: "change_counter_id_check", expression: "id = 1" }],
  properties: {
    id: p.smallint().primary().autoincrement(false),
    value: p.bigint(),
  },
});
export type ChangeCounterRow = InferEntity<typeof ChangeCounterRow>;

/** When a host may next be requested (per-host politeness between fetches). */
export const HostTurnRow = defineEntity({
  name: "HostTurnRow",
  tableName: "host_turns",
  properties: {
    host: p.text().primary(),
    nextAt: p.datetime(),
  },
});
export type HostTurnRow = InferEntity<typeof HostTurnRow>;

export const entities = [SourceRow, ItemRow, ItemRevisionRow, FetchRunRow, ChangeCounterRow, HostTurnRow];
