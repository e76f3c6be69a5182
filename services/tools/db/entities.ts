import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A job of a job tool, owned by the principal that created it (`owner`: usr_/gst_ person, app:<id>, svc:<key>).
 * State: queued → running → succeeded | failed | canceled. An executor holds a running job while `lease_until` is
 * ahead and `attempt` is its own: a lost executor's job goes back to the queue (or fails after its last attempt),
 * and only the attempt that still holds the lease may end it, so a job never completes twice.
 * `expires_at`: when its result files go, unless a reference keeps them (then null); `expired_at` once gone.
 */
export const JobRow = defineEntity({
  name: "JobRow",
  tableName: "jobs",
  indexes: [
    { name: "jobs_queue", properties: ["family", "state", "createdAt"] },
    { name: "jobs_by_owner", properties: ["owner", "createdAt"] },
    { name: "jobs_expiring", properties: ["expiresAt"], where: "expires_at is not null" },
  ],
  uniques: [
    { name: "jobs_idempotency_unique", properties: ["owner", "idempotencyKey"], where: "idempotency_key is not null" },
  ],
  checks: [
    {
      name: "jobs_state_check",
      expression: "state in ('queued', 'running', 'succeeded', 'failed', 'canceled')",
    },
    { name: "jobs_progress_check", expression: "progress >= 0 and progress <= 100" },
  ],
  properties: {
    id: p.text().primary(),
    tool: p.text(),
    family: p.text(),
    owner: p.text(),
    state: p.text(),
    progress: p.integer().default(0),
    input: p.json<Record<string, unknown>>(),
    output: p.json<Record<string, unknown>>().nullable(),
    failureCode: p.text().default(""),
    failureDetail: p.text().default(""),
    attempt: p.integer().default(0),
    leaseUntil: p.datetime().nullable(),
    /** The request's idempotency key, null when none (the unique index is partial). */
    idempotencyKey: p.text().nullable(),
    requestHash: p.text().default(""),
    retryOf: p.text().nullable(),
    retriedBy: p.text().nullable(),
    createdAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    expiresAt: p.datetime().nullable(),
    expiredAt: p.datetime().nullable(),
  },
});
export type JobRow = InferEntity<typeof JobRow>;

/**
 * An input file (`kind` input) or result file (`kind` result) of a job, numbered from 1 in its kind; its bytes
 * are the blob `blob_key`. Result rows are written only in the transaction that marks the job succeeded.
 */
export const JobFileRow = defineEntity({
  name: "JobFileRow",
  tableName: "job_files",
  checks: [
    { name: "job_files_kind_check", expression: "kind in ('input', 'result')" },
    { name: "job_files_size_check", expression: "size >= 0" },
  ],
  properties: {
    jobId: p.text().primary(),
    kind: p.text().primary(),
    n: p.integer().primary(),
    name: p.text(),
    contentType: p.text(),
    size: p.bigint("number"),
    sha256: p.text(),
    blobKey: p.text(),
  },
});
export type JobFileRow = InferEntity<typeof JobFileRow>;

/** One persisted progress event of a job: its id is the SSE id a client resumes after (Last-Event-ID). */
export const JobEventRow = defineEntity({
  name: "JobEventRow",
  tableName: "job_events",
  indexes: [{ name: "job_events_by_job", properties: ["jobId", "id"] }],
  properties: {
    id: p.bigint("string").primary().autoincrement(),
    jobId: p.text(),
    kind: p.text(),
    state: p.text(),
    progress: p.integer(),
    message: p.text().default(""),
    at: p.datetime(),
  },
});
export type JobEventRow = InferEntity<typeof JobEventRow>;

/** A reference `<service>:<type>:<id>` keeping a succeeded job's result files. */
export const JobReferenceRow = defineEntity({
  name: "JobReferenceRow",
  tableName: "job_references",
  properties: {
    jobId: p.text().primary(),
    ref: p.text().primary(),
    addedBy: p.text(),
    addedAt: p.datetime(),
  },
});
export type JobReferenceRow = InferEntity<typeof JobReferenceRow>;

/**
 * The pseudonymous abuse log of network probes: who (a keyed hash of the caller), what (a keyed hash of the
 * target), which tool and how it went; never a raw address or id.
 */
export const ProbeLogRow = defineEntity({
  name: "ProbeLogRow",
  tableName: "probe_log",
  indexes: [{ name: "probe_log_by_target", properties: ["targetHash", "at"] }],
  properties: {
    id: p.bigint("string").primary().autoincrement(),
    tool: p.text(),
    callerHash: p.text(),
    targetHash: p.text(),
    outcome: p.text(),
    at: p.datetime(),
  },
});
export type ProbeLogRow = InferEntity<typeof ProbeLogRow>;

export const entities = [JobRow, JobFileRow, JobEventRow, JobReferenceRow, ProbeLogRow];
