import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";

/** Adds a reference to a job's result (nothing when it is there already). */
export async function addReference(em: EntityManager, jobId: string, ref: string, addedBy: string, at: Date) {
  await sql(
    em,
    `insert into {job_references} (job_id, ref, added_by, added_at) values (?, ?, ?, ?) on conflict do nothing`,
    [jobId, ref, addedBy, at],
  );
}

/** Removes a reference; answers whether it was there. */
export async function removeReference(em: EntityManager, jobId: string, ref: string): Promise<boolean> {
  const rows = await sql(em, `delete from {job_references} where job_id = ? and ref = ? returning ref`, [jobId, ref]);
  return rows.length > 0;
}

/** Whether any reference keeps the job's result. */
export async function isReferenced(em: EntityManager, jobId: string): Promise<boolean> {
  const rows = await sql(em, `select 1 from {job_references} where job_id = ? limit 1`, [jobId]);
  return rows.length > 0;
}
