import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { JobFrameSchema } from "../../../gen/pf/bot/v1/jobs_pb.js";
import { JobExitSchema, JobSchema, type Job } from "../../../gen/pf/run/v1/jobs_pb.js";
import { signalAfterCommit } from "../../kit/db/commits.js";
import { lockedById } from "../../kit/db/locked.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";
import { JobRow } from "./entities.js";

export const jobNotFound = () => problem(404, "run.job.not_found", "There is no such job.");

/** A job as routes answer it: an entity, or a hot read's row (times as pg gives them, ids as text). */
export type JobView = Omit<JobRow, Times | "deviceEndedAt" | "nextAttemptAt"> & {
  [time in Times]?: Date | string | null;
};
type Times = "submittedAt" | "placedAt" | "receivedAt" | "startedAt" | "endedAt" | "cancelRequestedAt";

const COLUMNS = `id, project_id as "projectId", submitted_by as "submittedBy", subject, state, frame,
  node_id as "nodeId", robot_id as "robotId", submitted_at as "submittedAt", placed_at as "placedAt",
  received_at as "receivedAt", started_at as "startedAt", ended_at as "endedAt", exit,
  usage_seconds as "usageSeconds", usage_final as "usageFinal", attempts, offered,
  cancel_requested_at as "cancelRequestedAt", bot_cancel_pending as "botCancelPending", stdout, stderr, truncated,
  stream_bytes as "streamBytes", stream_cut as "streamCut", last_seq as "lastSeq"`;

const jobById = new HotRead<JobView, [string]>("jobs.by_id", `select ${COLUMNS} from {jobs} where id = $1`);

// Ids are time-sortable, so id order is newest first; filters left empty match everything.
const jobsPage = new HotRead<JobView, [string, string, string, number]>(
  "jobs.page",
  `select ${COLUMNS} from {jobs}
    where ($1 = '' or project_id = $1) and ($2 = '' or state = $2) and ($3 = '' or id < $3)
    order by id desc limit $4`,
);

/** A job, read outside any transaction (a hot read: jobs are polled); undefined when there is none. */
export async function readJob(ctx: ReadContext, id: string): Promise<JobView | undefined> {
  const [row] = await jobById.run(ctx, id);
  return row;
}

/** Up to `rows` jobs, newest first, of one project ("" every project) and state ("" any), before the cursor's id. */
export function readJobs(
  ctx: ReadContext,
  filters: { projectId: string; state: string; before: string },
  rows: number,
): Promise<JobView[]> {
  return jobsPage.run(ctx, filters.projectId, filters.state, filters.before, rows);
}

/**
 * A submitted job, as its submit claimed it for the first try (first-tries.ts): written with its first stream event,
 * in that event's flush (one insert, no update of its last seq after).
 */
export function newJob(em: EntityManager, job: RequiredEntityData<JobRow>): JobRow {
  return em.create(JobRow, job);
}

/** The job, locked for the rest of the transaction: its changes (events, placement, cancel) run one after another. */
export function lockedJob(em: EntityManager, id: string): Promise<JobRow | null> {
  return lockedById(em, JobRow, id);
}

/**
 * Applies changes to a job, written with the transaction's next flush (its end, or the consumer's after each event):
 * a job's changes in one event are one UPDATE, not one per step.
 */
export function changeJob(em: EntityManager, job: JobRow, changes: Partial<JobRow>): void {
  em.assign(job, changes);
}

/** Marks a cancel bot must still be told of; its commit wakes the placement job, which tells it. */
export function requireBotCancel(em: EntityManager, job: JobRow, at: Date): void {
  changeJob(em, job, { botCancelPending: true, cancelRequestedAt: job.cancelRequestedAt ?? at });
  signalAfterCommit(em, "jobs");
}

/**
 * Claims up to `limit` queued jobs due for a dispatch try, oldest due first, skipping rows another transaction
 * holds (a cancel): each counts one more try, offered (bot may hold it from now on), and is due again after
 * `backoff(tries)`, so a try cut off by a crash is made again then.
 */
export async function claimQueued(
  em: EntityManager,
  at: Date,
  limit: number,
  backoff: (attempts: number) => number,
): Promise<JobRow[]> {
  const rows = await em.find(
    JobRow,
    { state: "queued", nextAttemptAt: { $lte: at } },
    { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { nextAttemptAt: "asc", id: "asc" }, limit },
  );
  for (const row of rows) {
    row.attempts += 1;
    row.offered = true;
    row.nextAttemptAt = new Date(at.getTime() + backoff(row.attempts));
  }
  await em.flush();
  return rows;
}

/** Jobs whose cancel bot must still be told of (at most `limit`). */
export function pendingCancels(em: EntityManager, limit: number): Promise<JobRow[]> {
  return em.find(JobRow, { botCancelPending: true }, { orderBy: { id: "asc" }, limit });
}

/**
 * Jobs whose end or usage is not known and whose device should have reported by now: placed or running (or ended
 * here while a dispatch may still run on a device), their ttl (from the device's receipt, else placement, else
 * their end here) plus `graceMs` passed. At most `limit`, oldest first.
 */
export async function overdueJobs(em: EntityManager, at: Date, graceMs: number, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from {jobs}
      where not usage_final and not bot_cancel_pending and state <> 'queued'
        and coalesce(received_at, placed_at, ended_at, submitted_at)
            + ((frame->>'ttl_ms')::bigint + ?) * interval '1 millisecond' <= ?
      order by id limit ?`,
    [graceMs, at, limit],
  );
  return rows.map((row) => row.id);
}

const time = (value: Date | string | null | undefined) =>
  value === null || value === undefined ? undefined : timestampFromDate(new Date(value));

/** A job as the routes and the stream's first event answer it. */
export function jobToProto(job: JobView): Job {
  const frame = fromJson(JobFrameSchema, job.frame as JsonObject);
  return create(JobSchema, {
    id: job.id,
    projectId: job.projectId,
    state: job.state,
    class: frame.class,
    artifact: frame.artifact,
    args: frame.args,
    ttlMs: frame.ttlMs,
    limits: frame.limits,
    net: frame.net,
    inputs: frame.inputs,
    placement: { deviceId: job.nodeId, robotId: job.robotId },
    timings: {
      submittedAt: time(job.submittedAt),
      placedAt: time(job.placedAt),
      receivedAt: time(job.receivedAt),
      startedAt: time(job.startedAt),
      endedAt: time(job.endedAt),
    },
    exit: job.exit ? fromJson(JobExitSchema, job.exit as JsonObject) : undefined,
    usageSeconds: BigInt(job.usageSeconds),
    usageFinal: job.usageFinal,
    result: { stdout: job.stdout, stderr: job.stderr, truncated: job.truncated },
    cancelRequested: job.state !== "ended" && Boolean(job.cancelRequestedAt),
  });
}
