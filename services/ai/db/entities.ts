import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";
import { VERSION_IMMUTABLE } from "./migrations/Migration20270301000000_ai.js";

/**
 * A model provider and its circuit breaker, shared by every instance: `closed` → `open` after `breaker_threshold`
 * failures in a row → `half_open` once `breaker_reopens_at` passed (one instance's trial call holds
 * `breaker_trial_until`) → `closed` on its success, `open` again on its failure; a reset closes it.
 */
export const ProviderRow = defineEntity({
  name: "ProviderRow",
  tableName: "providers",
  checks: [
    { name: "providers_kind_check", expression: "kind in ('openai', 'anthropic', 'local')" },
    { name: "providers_breaker_check", expression: "breaker_state in ('closed', 'open', 'half_open')" },
  ],
  properties: {
    key: p.text().primary(),
    kind: p.text(),
    baseUrl: p.text().default(""),
    apiKeyEnv: p.text().default(""),
    enabled: p.boolean().default(true),
    timeoutMs: p.integer().default(30000),
    maxRetries: p.integer().default(2),
    breakerThreshold: p.integer().default(5),
    breakerOpenMs: p.integer().default(30000),
    breakerState: p.text().default("closed"),
    breakerFailures: p.integer().default(0),
    breakerOpenedAt: p.datetime().nullable(),
    breakerReopensAt: p.datetime().nullable(),
    breakerTrialUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ProviderRow = InferEntity<typeof ProviderRow>;

/** A model of a provider: the operations it serves, its limits and prices (micro-USD per 1,000 tokens). */
export const ModelRow = defineEntity({
  name: "ModelRow",
  tableName: "models",
  properties: {
    provider: p.text().primary(),
    model: p.text().primary(),
    operations: p.json<string[]>(),
    contextTokens: p.integer(),
    maxOutputTokens: p.integer(),
    inputMicrosPer1k: p.bigint("number").fieldName("input_micros_per_1k").defaultRaw("'0'"),
    outputMicrosPer1k: p.bigint("number").fieldName("output_micros_per_1k").defaultRaw("'0'"),
    enabled: p.boolean().default(true),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ModelRow = InferEntity<typeof ModelRow>;

/**
 * A quota per scope (namespace, caller, model) and subject (`*`: each alike) and period: its limits. What is used
 * is counted in the kit's quota_usage rows, as `ai.<id>.requests` and `ai.<id>.tokens` per key and window.
 */
export const QuotaRow = defineEntity({
  name: "QuotaRow",
  tableName: "quotas",
  uniques: [{ name: "quotas_unique", properties: ["scope", "subject", "period"] }],
  checks: [
    { name: "quotas_scope_check", expression: "scope in ('namespace', 'caller', 'model')" },
    { name: "quotas_period_check", expression: "period in ('minute', 'hour', 'day')" },
  ],
  properties: {
    id: p.text().primary(),
    scope: p.text(),
    subject: p.text(),
    period: p.text(),
    maxRequests: p.integer().default(0),
    maxTokens: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type QuotaRow = InferEntity<typeof QuotaRow>;

/**
 * A run, owned by its caller: queued → running → succeeded | failed | canceled. The instance executing it holds
 * it while `lease_until` is ahead; a run whose lease lapsed is failed by the reaper (its instance was lost).
 * `request` is what was asked (a retry asks it again); `retry_of` is unique, so a run is retried once.
 */
export const RunRow = defineEntity({
  name: "RunRow",
  tableName: "runs",
  indexes: [
    { name: "runs_by_caller", properties: ["caller", "createdAt"] },
    { name: "runs_by_created_at", properties: ["createdAt"] },
    { name: "runs_active", properties: ["leaseUntil"], where: "state in ('queued', 'running')" },
  ],
  uniques: [{ name: "runs_retry_of_unique", properties: ["retryOf"], where: "retry_of is not null" }],
  checks: [
    { name: "runs_state_check", expression: "state in ('queued', 'running', 'succeeded', 'failed', 'canceled')" },
  ],
  properties: {
    id: p.text().primary(),
    operation: p.text(),
    workflow: p.text().default(""),
    workflowVersion: p.integer().default(0),
    namespace: p.text(),
    caller: p.text(),
    state: p.text(),
    request: p.json<Record<string, unknown>>(),
    provider: p.text().default(""),
    model: p.text().default(""),
    stub: p.boolean().default(false),
    inputTokens: p.integer().default(0),
    outputTokens: p.integer().default(0),
    latencyMs: p.integer().default(0),
    cacheLookup: p.boolean().default(false),
    cacheHit: p.boolean().default(false),
    output: p.json<Record<string, unknown>>().nullable(),
    citations: p.json<Record<string, unknown>[]>().default("[]"),
    failureCode: p.text().default(""),
    failureDetail: p.text().default(""),
    attempts: p.integer().default(0),
    retryOf: p.text().nullable(),
    retriedBy: p.text().nullable(),
    leaseUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
  },
});
export type RunRow = InferEntity<typeof RunRow>;

/** One provider call of a run (retries and fallbacks each have their own). */
export const RequestLogRow = defineEntity({
  name: "RequestLogRow",
  tableName: "request_logs",
  indexes: [
    { name: "request_logs_by_at", properties: ["at"] },
    { name: "request_logs_by_run", properties: ["runId"] },
  ],
  properties: {
    id: p.text().primary(),
    runId: p.text(),
    caller: p.text(),
    namespace: p.text(),
    operation: p.text(),
    provider: p.text(),
    model: p.text(),
    outcome: p.text(),
    httpStatus: p.integer().default(0),
    inputTokens: p.integer().default(0),
    outputTokens: p.integer().default(0),
    latencyMs: p.integer().default(0),
    errorCode: p.text().default(""),
    at: p.datetime(),
  },
});
export type RequestLogRow = InferEntity<typeof RequestLogRow>;

/**
 * A cached answer, shared by every instance. Its key is a digest of the namespace, operation, provider and model,
 * the definition versions and the request, so no answer crosses namespaces or survives a new version.
 */
export const CacheEntryRow = defineEntity({
  name: "CacheEntryRow",
  tableName: "cache_entries",
  indexes: [{ name: "cache_entries_by_expiry", properties: ["expiresAt"] }],
  properties: {
    key: p.text().primary(),
    namespace: p.text(),
    operation: p.text(),
    provider: p.text(),
    model: p.text(),
    answer: p.json<Record<string, unknown>>(),
    bytes: p.integer(),
    hits: p.integer().default(0),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
  },
});
export type CacheEntryRow = InferEntity<typeof CacheEntryRow>;

/** When the whole cache was last purged (one row): its hit and miss counts start there. */
export const CacheStateRow = defineEntity({
  name: "CacheStateRow",
  tableName: "cache_state",
  checks: [{ name: "cache_state_one", expression: "id = 1" }],
  properties: {
    id: p.integer().primary().autoincrement(false).default(1),
    purgedAt: p.datetime(),
  },
});
export type CacheStateRow = InferEntity<typeof CacheStateRow>;

/** A prompt template, workflow definition or routing profile: its active version, and (routes) active or disabled. */
export const DefinitionRow = defineEntity({
  name: "DefinitionRow",
  tableName: "definitions",
  checks: [
    { name: "definitions_kind_check", expression: "kind in ('prompt', 'workflow', 'route')" },
    { name: "definitions_status_check", expression: "status in ('', 'active', 'disabled')" },
  ],
  properties: {
    kind: p.text().primary(),
    key: p.text().primary(),
    status: p.text().default(""),
    activeVersion: p.integer().default(0),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type DefinitionRow = InferEntity<typeof DefinitionRow>;

/** One version of a definition: insert-only (a trigger refuses any change but its status). */
export const DefinitionVersionRow = defineEntity({
  name: "DefinitionVersionRow",
  tableName: "definition_versions",
  uniques: [{ name: "definition_versions_one_active", properties: ["kind", "key"], where: "status = 'active'" }],
  triggers: [
    {
      name: "definition_versions_immutable",
      timing: "before",
      events: ["update", "delete"],
      forEach: "row",
      body: VERSION_IMMUTABLE,
    },
  ],
  checks: [
    {
      name: "definition_versions_status_check",
      expression: "status in ('draft', 'active', 'deprecated', 'archived')",
    },
  ],
  properties: {
    kind: p.text().primary(),
    key: p.text().primary(),
    version: p.integer().primary(),
    status: p.text(),
    body: p.json<Record<string, unknown>>(),
    note: p.text().default(""),
    createdBy: p.text(),
    createdAt: p.datetime(),
    statusChangedBy: p.text().default(""),
    statusChangedAt: p.datetime().nullable(),
  },
});
export type DefinitionVersionRow = InferEntity<typeof DefinitionVersionRow>;

/** One audited change: its actor, action, target, and the target before and after. */
export const AuditRow = defineEntity({
  name: "AuditRow",
  tableName: "audit_log",
  indexes: [
    { name: "audit_log_by_at", properties: ["at"] },
    { name: "audit_log_by_target", properties: ["targetKind", "targetKey", "at"] },
  ],
  properties: {
    id: p.text().primary(),
    actor: p.text(),
    action: p.text(),
    targetKind: p.text(),
    targetKey: p.text(),
    before: p.json<Record<string, unknown>>().nullable(),
    after: p.json<Record<string, unknown>>().nullable(),
    at: p.datetime(),
  },
});
export type AuditRow = InferEntity<typeof AuditRow>;

export const entities = [
  ProviderRow,
  ModelRow,
  QuotaRow,
  RunRow,
  RequestLogRow,
  CacheEntryRow,
  CacheStateRow,
  DefinitionRow,
  DefinitionVersionRow,
  AuditRow,
];
