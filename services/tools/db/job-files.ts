import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { JobFileRow } from "./entities.js";

/** A job's result file n, or null. */
export function resultFile(em: EntityManager, jobId: string, n: number): Promise<JobFileRow | null> {
  return em.findOne(JobFileRow, { jobId, kind: "result", n }, { refresh: true });
}

/**
 * The blobs a job's file rows still name (an empty `blob_key` says its bytes are gone), of one kind or both:
 * what is deleted when the job lets its files go.
 */
export async function heldBlobs(em: EntityManager, jobId: string, kind?: "input" | "result"): Promise<string[]> {
  const rows = await em.find(
    JobFileRow,
    { jobId, blobKey: { $ne: "" }, ...(kind && { kind }) },
    { fields: ["blobKey"], refresh: true },
  );
  return rows.map((row) => row.blobKey);
}

/** Records that the blobs of a job's file rows (of one kind, or all) are gone: the rows stay, as what it had. */
export async function forgetBlobs(em: EntityManager, jobId: string, kind?: "input" | "result"): Promise<void> {
  await sql(em, `update {job_files} set blob_key = '' where job_id = ? and kind like ?`, [jobId, kind ?? "%"]);
}

/**
 * Gives a failed job's input files to its retry: the retry's input rows name the same blobs (never copied), and the
 * failed job's rows let them go, so each blob has one row answering for it (the sweep deletes it with that row's job).
 */
export async function handOverInputs(em: EntityManager, from: string, to: string): Promise<void> {
  await sql(
    em,
    `insert into {job_files} (job_id, kind, n, name, content_type, size, sha256, blob_key)
     select ?, kind, n, name, content_type, size, sha256, blob_key from {job_files} where job_id = ? and kind = 'input'`,
    [to, from],
  );
  await forgetBlobs(em, from, "input");
}
