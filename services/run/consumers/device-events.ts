import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { JobEventSchema } from "../../../gen/pf/bot/v1/events_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import type { RunContext } from "../context.js";
import { lockedJob } from "../db/jobs.js";
import { deviceEnded, output, received, started } from "../lifecycle.js";

const date = (at: Timestamp | undefined) => (at ? timestampDate(at) : undefined);

/**
 * bot.job.received, started, output and ended: what the device said of a dispatched job, in bot's order (one
 * durable consumer on all four keeps it), each applied once (the inbox). They move the job's state, persist its
 * output as stream events and record its exit and usage. Jobs run does not hold are not its own and pass.
 */
export const deviceEvents = consumer({
  name: "device_events",
  subject: "bot.job.*",
  event: JobEventSchema,
  async handle(event, em, meta, ctx: RunContext) {
    const job = await lockedJob(em, event.jobId);
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
