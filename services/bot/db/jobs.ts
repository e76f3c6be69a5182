import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import {
  DispatchedJobSchema,
  DispatchState,
  JobExitSchema,
  JobFrameSchema,
  type DispatchedJob,
  type JobFrame,
} from "../../../gen/pf/bot/v1/jobs_pb.js";
import { lockedById } from "../../kit/db/locked.js";
import { problem } from "../../kit/handler/problem.js";
import type { JobState } from "../domain/dispatch.js";
import { JobRow } from "./entities.js";

export const jobNotFound = () => problem(404, "bot.job_not_found", "No job was dispatched under this id.");

/** A dispatched job, locked for the rest of the transaction when `lock`. */
export function jobById(em: EntityManager, id: string, lock = false): Promise<JobRow | null> {
  return lock ? lockedById(em, JobRow, id) : em.findOne(JobRow, { id });
}

/** Stores a new dispatch, with the transaction's flush (`ctx.transaction`). */
export function insertJob(em: EntityManager, row: JobRow): JobRow {
  return em.create(JobRow, row);
}

/** Writes the changes made to job rows. */
export async function saveJobs(em: EntityManager): Promise<void> {
  await em.flush();
}

/** The frames waiting for a device: dispatched, not acknowledged, no cancel asked; oldest first. */
export function waitingJobs(em: EntityManager, nodeId: string): Promise<JobRow[]> {
  return em.find(
    JobRow,
    { nodeId, state: "dispatched", cancelRequested: false },
    { orderBy: { dispatchedAt: "asc", id: "asc" } },
  );
}

/** A device's jobs that have not ended, locked, in dispatch order. */
export function openJobsOf(em: EntityManager, nodeIds: string[]): Promise<JobRow[]> {
  return em.find(
    JobRow,
    { nodeId: { $in: nodeIds }, state: { $ne: "ended" } },
    { orderBy: { dispatchedAt: "asc", id: "asc" }, lockMode: LockMode.PESSIMISTIC_WRITE },
  );
}

/** Up to `rows` jobs past their lost moment, locked and skipped by another pass that holds them. */
export function lostJobs(em: EntityManager, now: Date, rows: number): Promise<JobRow[]> {
  return em.find(
    JobRow,
    { state: { $ne: "ended" }, lostAt: { $lte: now } },
    { orderBy: { lostAt: "asc" }, limit: rows, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
  );
}

const STATES: Record<JobState, DispatchState> = {
  dispatched: DispatchState.DISPATCHED,
  received: DispatchState.RECEIVED,
  running: DispatchState.RUNNING,
  ended: DispatchState.ENDED,
};

/** The frame as dispatched. */
export function frameOf(row: JobRow): JobFrame {
  return fromJson(JobFrameSchema, row.frame as JsonValue);
}

/** A dispatched job as the dispatch routes answer it, with its captured output. */
export function jobToProto(row: JobRow): DispatchedJob {
  return create(DispatchedJobSchema, {
    id: row.id,
    nodeId: row.nodeId,
    robotId: row.robotId,
    projectId: row.projectId,
    subject: row.subject,
    provider: row.provider,
    job: frameOf(row),
    state: STATES[row.state as JobState],
    exit: row.exit ? fromJson(JobExitSchema, row.exit as JsonValue) : undefined,
    stdout: row.stdout,
    stderr: row.stderr,
    dispatchedAt: timestampFromDate(row.dispatchedAt),
    receivedAt: row.receivedAt ? timestampFromDate(row.receivedAt) : undefined,
    startedAt: row.startedAt ? timestampFromDate(row.startedAt) : undefined,
    endedAt: row.endedAt ? timestampFromDate(row.endedAt) : undefined,
    cancelRequested: row.cancelRequested,
  });
}
