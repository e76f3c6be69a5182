import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { signalAfterCommit } from "../../kit/db/commits.js";
import { sql } from "../../kit/db/sql.js";
import { recordToolsEvent, toolsSubjects } from "../events.js";
import type { JsonObject } from "../catalogue/descriptor.js";
import { percentOf } from "../domain/jobs/states.js";
import { JobRow } from "./entities.js";
import { addJobEvent } from "./job-events.js";
import { insertFiles, lockedJob, saveJob, type StoredJobFile } from "./jobs.js";

/** One attempt of a job: the executor that claimed it holds it while the job is running with this attempt. */
export interface Attempt {
  id: string;
  attempt: number;
}

/**
 * Claims the oldest queued job of a family that no other executor is claiming (FOR UPDATE SKIP LOCKED): running,
 * its attempt counted, held until `leaseUntil`; its `started` event written. Undefined when none is queued.
 */
export async function claimQueuedJob(
  em: EntityManager,
  family: string,
  at: Date,
  leaseUntil: Date,
): Promise<JobRow | undefined> {
  const [row] = await em.find(
    JobRow,
    { family, state: "queued" },
    { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { createdAt: "asc", id: "asc" }, limit: 1, refresh: true },
  );
  if (!row) return undefined;
  await saveJob(em, row, { state: "running", attempt: row.attempt + 1, leaseUntil, startedAt: row.startedAt ?? at });
  await addJobEvent(em, row, "started", "", at);
  return row;
}

/** Moves the lease of a running attempt on; false when the attempt no longer holds the job (canceled, taken over). */
export async function renewLease(em: EntityManager, attempt: Attempt, until: Date): Promise<boolean> {
  const rows = await sql(
    em,
    `update {jobs} set lease_until = ? where id = ? and state = 'running' and attempt = ? returning id`,
    [until, attempt.id, attempt.attempt],
  );
  return rows.length > 0;
}

/** The job, locked, while this attempt still holds it (running, its attempt the current one); else undefined. */
export async function heldJob(em: EntityManager, attempt: Attempt): Promise<JobRow | undefined> {
  const row = await lockedJob(em, attempt.id);
  return row?.state === "running" && row.attempt === attempt.attempt ? row : undefined;
}

/** Records a running attempt's progress and its event; false when the attempt no longer holds the job. */
export async function recordProgress(
  em: EntityManager,
  attempt: Attempt,
  percent: number,
  message: string,
  at: Date,
): Promise<boolean> {
  const row = await heldJob(em, attempt);
  if (!row) return false;
  await saveJob(em, row, { progress: percentOf(percent) });
  await addJobEvent(em, row, "progress", message, at);
  return true;
}

/** How a job ended: succeeded with its output and result files, failed with a reason, or canceled. */
export type JobEnd =
  | { state: "succeeded"; output: JsonObject; files: StoredJobFile[]; expiresAt: Date }
  | { state: "failed"; code: string; detail: string; expiresAt: Date }
  | { state: "canceled" };

const SUBJECTS = {
  succeeded: toolsSubjects.jobSucceeded,
  failed: toolsSubjects.jobFailed,
  canceled: toolsSubjects.jobCanceled,
} as const;

/**
 * Ends a job (locked by the caller, not ended yet): its state, result file rows (written here only, so no other
 * file is ever served), its expiry, its last event and its tools event, all in the caller's transaction. A
 * canceled job's files expire at once: no retry can use them.
 */
export async function endJob(em: EntityManager, row: JobRow, end: JobEnd, at: Date): Promise<JobRow> {
  if (end.state === "succeeded") await insertFiles(em, row.id, "result", end.files);
  await saveJob(em, row, {
    state: end.state,
    leaseUntil: null,
    endedAt: at,
    ...(end.state === "succeeded" && { progress: 100, output: end.output, expiresAt: end.expiresAt }),
    ...(end.state === "failed" && { failureCode: end.code, failureDetail: end.detail, expiresAt: end.expiresAt }),
    ...(end.state === "canceled" && { expiresAt: at }),
  });
  await addJobEvent(em, row, end.state, end.state === "failed" ? end.detail : "", at);
  await recordToolsEvent(em, SUBJECTS[end.state], {
    jobId: row.id,
    tool: row.tool,
    owner: row.owner,
    failureCode: end.state === "failed" ? end.code : undefined,
    at,
  });
  return row;
}

/** Puts a running job back in the queue (its executor lost or stopping) to start over, with the event saying why. */
export async function requeueJob(em: EntityManager, row: JobRow, message: string, at: Date): Promise<void> {
  await saveJob(em, row, { state: "queued", leaseUntil: null, progress: 0 });
  await addJobEvent(em, row, "queued", message, at);
  signalAfterCommit(em, "jobs");
}

/**
 * Running jobs of these families whose lease ran out before `at` (their executor is gone), oldest lease first, at
 * most `limit` (by family and state: the queue's index).
 */
export async function lapsedJobs(em: EntityManager, families: string[], at: Date, limit: number): Promise<Attempt[]> {
  const rows = await em.find(
    JobRow,
    { family: { $in: families }, state: "running", leaseUntil: { $lt: at } },
    { orderBy: { leaseUntil: "asc" }, limit, fields: ["id", "attempt"], refresh: true },
  );
  return rows.map((row) => ({ id: row.id, attempt: row.attempt }));
}
