import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A submitted job of one project. `frame` is the job frame as submitted (pf.bot.v1.JobFrame as proto JSON); `exit`
 * run's JobExit as proto JSON once ended. Placement: `attempts` dispatches tried, the next due at `next_attempt_at`.
 * Usage: `usage_final` once the device's exit (or the certainty that none will come) fixed `usage_seconds`.
 * `bot_cancel_pending`: a cancel bot must still be told of. `stream_bytes`, `stream_cut` and `last_seq` bound and
 * number the job's persisted stream events; `truncated`: some output was not kept (in the stream or the result).
 */
export const JobRow = defineEntity({
  name: "JobRow",
  tableName: "jobs",
  indexes: [
    { name: "jobs_by_project", properties: ["projectId", "id"] },
    { name: "jobs_queued", properties: ["nextAttemptAt"], where: "state = 'queued'" },
    { name: "jobs_unsettled", properties: ["id"], where: "not usage_final" },
    { name: "jobs_cancels_pending", properties: ["id"], where: "bot_cancel_pending" },
  ],
  checks: [
    { name: "jobs_state_check", expression: "state in ('queued', 'placed', 'running', 'ended')" },
    { name: "jobs_usage_check", expression: "usage_seconds >= 0" },
  ],
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    submittedBy: p.text(),
    subject: p.text(),
    state: p.text(),
    frame: p.json<Record<string, unknown>>(),
    nodeId: p.text().default(""),
    robotId: p.text().default(""),
    submittedAt: p.datetime(),
    placedAt: p.datetime().nullable(),
    receivedAt: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    deviceEndedAt: p.datetime().nullable(),
    exit: p.json<Record<string, unknown>>().nullable(),
    usageSeconds: p.integer().default(0),
    usageFinal: p.boolean().default(false),
    attempts: p.integer().default(0),
    offered: p.boolean().default(false),
    nextAttemptAt: p.datetime().nullable(),
    cancelRequestedAt: p.datetime().nullable(),
    botCancelPending: p.boolean().default(false),
    stdout: p.text().default(""),
    stderr: p.text().default(""),
    truncated: p.boolean().default(false),
    streamBytes: p.integer().default(0),
    streamCut: p.boolean().default(false),
    lastSeq: p.integer().default(0),
  },
});
export type JobRow = InferEntity<typeof JobRow>;

/** One persisted event of a job's stream (a state entered, a chunk of output): `seq` is its SSE id. Insert-only. */
export const JobStreamEventRow = defineEntity({
  name: "JobStreamEventRow",
  tableName: "job_stream_events",
  checks: [{ name: "job_stream_events_kind_check", expression: "kind in ('state', 'output')" }],
  properties: {
    jobId: p.text().primary(),
    seq: p.integer().primary(),
    at: p.datetime(),
    kind: p.text(),
    body: p.json<Record<string, unknown>>(),
  },
});
export type JobStreamEventRow = InferEntity<typeof JobStreamEventRow>;

/** A stream ticket, stored only as its sha256: one use (`used_at`), until `expires_at`, for one job and its minter. */
export const StreamTicketRow = defineEntity({
  name: "StreamTicketRow",
  tableName: "stream_tickets",
  indexes: [{ name: "stream_tickets_expiry", properties: ["expiresAt"] }],
  properties: {
    hash: p.text().primary(),
    jobId: p.text(),
    minter: p.text(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
  },
});
export type StreamTicketRow = InferEntity<typeof StreamTicketRow>;

export const entities = [JobRow, JobStreamEventRow, StreamTicketRow];
