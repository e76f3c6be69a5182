import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { JobRow } from "./entities.js";
import { addJobEvent } from "./job-events.js";
import { saveJob } from "./jobs.js";

/** A job whose files are let go: which attempts may have written result blobs. */
export interface ExpiringJob {
  id: string;
  attempts: number;
}

/**
 * Marks expired the jobs whose files are due to go (`expires_at` before `at`; a referenced result has none), at most
 * `limit`, skipping those another transaction holds (a reference being added): from now on their files are never
 * served nor retried (410), and each gets its `expired` event once. Answers them, with those marked before whose
 * blobs a pass cut off did not finish deleting (they keep `expires_at` until then).
 */
export async function expireDue(em: EntityManager, at: Date, limit: number): Promise<ExpiringJob[]> {
  const rows = await em.find(
    JobRow,
    { expiresAt: { $lt: at } },
    { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { expiresAt: "asc" }, limit, refresh: true },
  );
  for (const row of rows) {
    if (row.expiredAt) continue;
    await saveJob(em, row, { expiredAt: at });
    await addJobEvent(em, row, "expired", "", at);
  }
  return rows.map((row) => ({ id: row.id, attempts: row.attempt }));
}

/** Ends an expired job's expiry once its blobs are deleted: nothing is left for the sweep to do. */
export async function expiryDone(em: EntityManager, jobId: string): Promise<void> {
  const row = await em.findOne(JobRow, { id: jobId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (row?.expiredAt) await saveJob(em, row, { expiresAt: null });
}
