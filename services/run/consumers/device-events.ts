import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { JobEventSchema } from "../../../gen/pf/bot/v1/events_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { RunContext } from "../context.js";
import type { JobRow } from "../db/entities.js";
import { lockedJob } from "../db/jobs.js";
import { deviceEnded, output, received, started } from "../lifecycle.js";

const date = (at: Timestamp | undefined) => (at ? timestampDate(at) : undefined);

/** The jobs a transaction has locked: a batch's later events of a job apply to the row in hand, not locked again. */
const lockedIn = new WeakMap<EntityManager, Map<string, JobRow>>();

async function jobOf(em: EntityManager, id: string): Promise<JobRow | null> {
  let locked = lockedIn.get(em);
  if (!locked) lockedIn.set(em, (locked = new Map()));
  const held = locked.get(id);
  if (held) return held;
  const job = await lockedJob(em, id);
  if (job) locked.set(id, job);
  return job;
}

/**
 * bot.job.received, started, output and ended: what the device said of a dispatched job, in bot's order (one
 * durable consumer on all four keeps it), each applied once (the inbox). They move the job's state, persist its
 * output as stream events and record its exit and usage. Jobs run does not hold are not its own and pass.
 */
export const deviceEvents = consumer({
  name: "device_events",
  subject: "bot.job.*",
  event: JobEventSchema,
  // A batch's events change their jobs' entities held in `lockedIn`: its stream events and job updates go together.
  flushOnce: true,
  async handle(event, em, meta, ctx: RunContext) {
    const job = await jobOf(em, event.jobId);
    if (!job) return;
    ctx.watchers.wakeAtCommit(em, job.id);
    const at = date(event.at) ?? ctx.clock.now();
    switch (meta.subject) {
      case "bot.job.received":
        return received(em, job, { nodeId: event.nodeId, robotId: event.robotId }, at);
      case "bot.job.started":
        return started(em, job, at);
      case "bot.job.output":
        return output(em, ctx.settings, job, { stream: event.stream, text: event.text }, at);
      case "bot.job.ended":
        return deviceEnded(em, job, { exit: event.exit, startedAt: date(event.startedAt), endedAt: at });
    }
  },
});
