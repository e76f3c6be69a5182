import { create, type JsonObject as ProtoJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { JobFileSchema, JobSchema, type Job, type JobFile } from "../../../gen/pf/tools/v1/jobs_pb.js";
import { signalAfterCommit } from "../../kit/db/commits.js";
import { sql } from "../../kit/db/sql.js";
import { jobNotFound } from "../domain/jobs/problems.js";
import type { JsonObject } from "../catalogue/descriptor.js";
import { JobFileRow, JobReferenceRow, JobRow } from "./entities.js";
import { addJobEvent } from "./job-events.js";

/** A job as it is about to be queued. */
export interface NewJob {
  id: string;
  tool: string;
  family: string;
  owner: string;
  input: JsonObject;
  idempotencyKey: string | null;
  requestHash: string;
  retryOf: string | null;
  createdAt: Date;
}

/** A file whose bytes are stored (an input as uploaded or read from media, a result as a tool wrote it). */
export interface StoredJobFile {
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  blobKey: string;
}

/**
 * Queues a job with its input files and its `queued` event, unless its owner already has a job under its
 * idempotency key (then nothing is written and undefined answers: a concurrent duplicate waits here for the first
 * one's commit). Its commit wakes this process's executors.
 */
export async function insertJob(em: EntityManager, job: NewJob, inputs: StoredJobFile[]): Promise<JobRow | undefined> {
  const inserted = await sql<{ id: string }>(
    em,
    `insert into {jobs} (id, tool, family, owner, state, progress, input, idempotency_key, request_hash, retry_of,
       created_at)
     values (?, ?, ?, ?, 'queued', 0, ?::jsonb, ?, ?, ?, ?)
     on conflict (owner, idempotency_key) where idempotency_key is not null do nothing
     returning id`,
    [
      job.id,
      job.tool,
      job.family,
      job.owner,
      JSON.stringify(job.input),
      job.idempotencyKey,
      job.requestHash,
      job.retryOf,
      job.createdAt,
    ],
  );
  if (inserted.length === 0) return undefined;
  await insertFiles(em, job.id, "input", inputs);
  const row = (await jobById(em, job.id))!;
  await addJobEvent(em, row, "queued", "", job.createdAt);
  signalAfterCommit(em, "jobs");
  return row;
}

/** Writes a job's input or result file rows, numbered from 1 in their order. */
export async function insertFiles(
  em: EntityManager,
  jobId: string,
  kind: "input" | "result",
  files: StoredJobFile[],
): Promise<void> {
  if (files.length === 0) return;
  await em.insertMany(
    JobFileRow,
    files.map((file, index) => ({ jobId, kind, n: index + 1, ...file })),
  );
}

/** A job by its id, or null. */
export function jobById(em: EntityManager, id: string): Promise<JobRow | null> {
  return em.findOne(JobRow, { id }, { refresh: true });
}

/** A job by its id, locked to the end of the transaction (its changes are decided one after the other), or null. */
export function lockedJob(em: EntityManager, id: string): Promise<JobRow | null> {
  return em.findOne(JobRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** The owner's job under an idempotency key, or null. */
export function jobByIdempotencyKey(em: EntityManager, owner: string, key: string): Promise<JobRow | null> {
  return em.findOne(JobRow, { owner, idempotencyKey: key }, { refresh: true });
}

/** The owner's job, else 404 (another caller's job answers as a missing one). */
export async function ownJob(em: EntityManager, id: string, owner: string, lock = false): Promise<JobRow> {
  const row = lock ? await lockedJob(em, id) : await jobById(em, id);
  if (!row || row.owner !== owner) throw jobNotFound(id);
  return row;
}

/** A job's file rows, inputs then results, each by number. */
export function filesOf(em: EntityManager, jobId: string): Promise<JobFileRow[]> {
  return em.find(JobFileRow, { jobId }, { orderBy: { kind: "asc", n: "asc" }, refresh: true });
}

/** The references keeping a job's result, by reference. */
export async function referencesOf(em: EntityManager, jobId: string): Promise<string[]> {
  const rows = await em.find(JobReferenceRow, { jobId }, { orderBy: { ref: "asc" }, refresh: true });
  return rows.map((row) => row.ref);
}

/** Saves changes made to a job row read in this transaction. */
export async function saveJob(em: EntityManager, row: JobRow, changes: Partial<JobRow>): Promise<JobRow> {
  em.assign(row, changes);
  await em.flush();
  return row;
}

/** The job as the contract answers it, with its files and references read. */
export async function jobView(em: EntityManager, row: JobRow): Promise<Job> {
  return jobToProto(row, await filesOf(em, row.id), await referencesOf(em, row.id));
}

/**
 * The job as the contract answers it: result files, output and expiry only once succeeded, the failure only once
 * failed; `expired` once its files are gone (results of a succeeded job, inputs kept for a retry of a failed one).
 */
export function jobToProto(row: JobRow, files: JobFileRow[], references: string[]): Job {
  const succeeded = row.state === "succeeded";
  const expired = row.expiredAt !== null && row.expiredAt !== undefined;
  const at = (date: Date | null | undefined) => (date ? timestampFromDate(new Date(date)) : undefined);
  return create(JobSchema, {
    id: row.id,
    tool: row.tool,
    state: row.state,
    progress: row.progress,
    owner: row.owner,
    // Stored as the contract's JSON (an input valid against its schema, an output the tool's schema took).
    input: row.input as ProtoJson,
    inputs: files.filter((file) => file.kind === "input").map(fileToProto),
    files: succeeded ? files.filter((file) => file.kind === "result").map(fileToProto) : [],
    output: succeeded ? ((row.output ?? undefined) as ProtoJson | undefined) : undefined,
    failure: row.state === "failed" ? { code: row.failureCode, detail: row.failureDetail } : undefined,
    references,
    expiresAt: succeeded && !expired && references.length === 0 ? at(row.expiresAt) : undefined,
    expired,
    retriedBy: row.retriedBy ?? "",
    retryOf: row.retryOf ?? "",
    attempts: row.attempt,
    createdAt: at(row.createdAt),
    startedAt: at(row.startedAt),
    endedAt: at(row.endedAt),
  });
}

function fileToProto(row: JobFileRow): JobFile {
  return create(JobFileSchema, {
    n: row.n,
    name: row.name,
    contentType: row.contentType,
    size: BigInt(row.size),
    sha256: row.sha256,
  });
}
