import type { EntityManager } from "@mikro-orm/postgresql";
import { JobEventSchema } from "../../gen/pf/run/v1/events_pb.js";
import type { JobStreamEvent } from "../../gen/pf/run/v1/jobs_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import type { JobRow } from "./db/entities.js";

/** The subjects of a job's persisted stream events, by what they tell (designed: `run.job.<verb-past>`). */
export const streamSubjects = {
  queued: "run.job.queued",
  placed: "run.job.placed",
  running: "run.job.started",
  ended: "run.job.ended",
  output: "run.job.output",
} as const;

/** The subject whose events billing's usage effect records. */
export const METERED = "run.job.metered";

/**
 * run.job.<what>: a stream event of the job was persisted, in the transaction that persisted it (open streams on
 * every instance hear it and read the job's stream again).
 */
export function jobStreamed(
  em: EntityManager,
  job: JobRow,
  what: keyof typeof streamSubjects,
  event: JobStreamEvent,
  at: Date,
) {
  return recordEvent(em, streamSubjects[what], JobEventSchema, { jobId: job.id, projectId: job.projectId, event }, at);
}

/** run.job.metered: the job's usage seconds are final, in the transaction that fixed them. */
export function jobMetered(em: EntityManager, job: JobRow, at: Date) {
  return recordEvent(
    em,
    METERED,
    JobEventSchema,
    { jobId: job.id, projectId: job.projectId, usageSeconds: BigInt(job.usageSeconds) },
    at,
  );
}
