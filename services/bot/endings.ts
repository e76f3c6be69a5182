import { create, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ExitReason, JobExitSchema } from "../../gen/pf/bot/v1/jobs_pb.js";
import type { JobRow } from "./db/entities.js";
import { jobEvent } from "./events.js";

/**
 * Ends a dispatched job that has not ended, in the caller's transaction (the caller holds its row's lock and saves
 * it): its exit, its end time, and bot.job.ended after its other events. How a job ends is the device's to say
 * (its `exit` frame); bot says it only where the device cannot: a frame that never reached it, a device revoked,
 * deleted or silent past the ttl.
 */
export async function endJob(
  em: EntityManager,
  row: JobRow,
  init: MessageInitShape<typeof JobExitSchema>,
  at: Date,
  startedAt: Date | null = row.startedAt ?? null,
): Promise<void> {
  const exit = create(JobExitSchema, init);
  row.state = "ended";
  row.exit = toJson(JobExitSchema, exit) as Record<string, unknown>;
  row.endedAt = at;
  row.startedAt = startedAt;
  await jobEvent(em, "ended", row, { at, exit, startedAt });
}

/** The exit of a job bot ends as canceled: it never reached its device, or the device can no longer report. */
export const canceled = (detail: string) => ({ reason: ExitReason.CANCELED, detail });

/** The exit of a job whose device went silent past its ttl. */
export const lost = (detail: string) => ({ reason: ExitReason.LOST, detail });
