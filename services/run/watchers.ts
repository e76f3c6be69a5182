import { fromJsonString } from "@bufbuild/protobuf";
import { JobEventSchema } from "../../gen/pf/run/v1/events_pb.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import { wakeAfterCommit } from "../kit/db/commits.js";
import type { BusMessage, EventBus } from "../kit/events/bus.js";
import type { Logger } from "../kit/runtime/logger.js";
import { Listeners } from "../kit/runtime/wakes.js";
import { streamSubjects } from "./events.js";

/**
 * What wakes one instance's open job streams: one bus subscription per stream subject (not one per stream), each
 * run.job.* event fanned out to the streams of its job, which then read the job's persisted stream again. The events
 * leave the outbox only after their commit, so a woken stream finds what woke it. The instance that applies a
 * device's report wakes its own streams at the commit too, without waiting for the event's way through the bus. Not
 * durable: a wake missed is made up by the stream's own recheck (PF_RUN_STREAM_RECHECK_MS).
 */
export class JobWatchers {
  private readonly listeners = new Listeners();
  private subscribed = false;

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Calls `wake` after each committed stream event of the job until the answer is called. */
  watch(jobId: string, wake: () => void): () => void {
    if (!this.subscribed) this.subscribe();
    return this.listeners.watch(jobId, wake);
  }

  /** Wakes this instance's streams of the job once `em`'s transaction, which streamed it an event, commits. */
  wakeAtCommit(em: EntityManager, jobId: string): void {
    wakeAfterCommit(em, () => this.listeners.tell(jobId));
  }

  private subscribe(): void {
    this.subscribed = true;
    for (const subject of Object.values(streamSubjects)) this.bus.subscribe(subject, (message) => this.wake(message));
  }

  private wake(message: BusMessage): void {
    let jobId: string;
    try {
      jobId = fromJsonString(JobEventSchema, new TextDecoder().decode(message.data), {
        ignoreUnknownFields: true,
      }).jobId;
    } catch (error) {
      this.logger.warn({ err: error, subject: message.subject }, "job stream event not readable; skipped");
      return;
    }
    this.listeners.tell(jobId);
  }
}
