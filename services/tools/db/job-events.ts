import type { EntityManager } from "@mikro-orm/postgresql";
import type { JobEventKind } from "../domain/jobs/states.js";
import { JobEventRow, type JobRow } from "./entities.js";

/** Persists one event of a job as its row now stands (state and progress): its id is the SSE id. */
export async function addJobEvent(
  em: EntityManager,
  job: Pick<JobRow, "id" | "state" | "progress">,
  kind: JobEventKind,
  message: string,
  at: Date,
): Promise<void> {
  em.create(JobEventRow, { jobId: job.id, kind, state: job.state, progress: job.progress, message, at });
  await em.flush();
}

/** A job's events after the one with id `after` ("0": from the first), oldest first, at most `limit`. */
export function jobEventsAfter(em: EntityManager, jobId: string, after: string, limit: number): Promise<JobEventRow[]> {
  return em.find(JobEventRow, { jobId, id: { $gt: after } }, { orderBy: { id: "asc" }, limit, refresh: true });
}
