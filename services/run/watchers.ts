import { fromJsonString } from "@bufbuild/protobuf";
import { JobEventSchema } from "../../gen/pf/run/v1/events_pb.js";
import type { JobStreamEvent } from "../../gen/pf/run/v1/jobs_pb.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import { wakeAfterCommit } from "../kit/db/commits.js";
import type { BusMessage, EventBus } from "../kit/events/bus.js";
import type { Logger } from "../kit/runtime/logger.js";
import { Listeners } from "../kit/runtime/wakes.js";
import { streamSubjects } from "./events.js";

/** What a wake hands a job's open streams: stream events committed, as the teller has them (maybe none). */
export type StreamNews = readonly JobStreamEvent[];

/** The stream events each transaction persisted, by job: handed to this instance's streams at its commit. */
const streamedIn = new WeakMap<EntityManager, Map<string, JobStreamEvent[]>>();

/** Notes that `em`'s transaction persisted `event` of the job's stream (`lifecycle`'s every stream event). */
export function noteStreamed(em: EntityManager, jobId: string, event: JobStreamEvent): void {
  let byJob = streamedIn.get(em);
  if (!byJob) streamedIn.set(em, (byJob = new Map()));
  const events = byJob.get(jobId);
  if (events) events.push(event);
  else byJob.set(jobId, [event]);
}

/**
 * What wakes one instance's open job streams: one bus subscription per stream subject (not one per stream), each
 * run.job.* event fanned out to the streams of its job with the stream event it carries, which a stream sends
 * without reading it back (it reads the persisted stream only past a gap). The events leave the outbox only after
 * their commit. The instance that applies a device's report hands its own streams the events at the commit,
 * without waiting for their way through the bus. Not durable: a wake missed is made up by the stream's own recheck
 * (PF_RUN_STREAM_RECHECK_MS).
 */
export class JobWatchers {
  private readonly listeners = new Listeners<StreamNews>();
  /** The jobs each transaction wakes at its commit (once each, however many events of a batch it applied). */
  private readonly waking = new WeakMap<EntityManager, Set<string>>();
  private subscribed = false;

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Calls `hear` with each committed stream event of the job (or none: read again) until the answer is called. */
  watch(jobId: string, hear: (news: StreamNews) => void): () => void {
    if (!this.subscribed) this.subscribe();
    return this.listeners.watch(jobId, hear);
  }

  /** Hands this instance's streams of the job the events `em`'s transaction persisted, once it commits. */
  wakeAtCommit(em: EntityManager, jobId: string): void {
    let jobs = this.waking.get(em);
    if (!jobs) this.waking.set(em, (jobs = new Set()));
    if (jobs.has(jobId)) return;
    jobs.add(jobId);
    wakeAfterCommit(em, () => this.listeners.tell(jobId, streamedIn.get(em)?.get(jobId) ?? []));
  }

  private subscribe(): void {
    this.subscribed = true;
    for (const subject of Object.values(streamSubjects)) this.bus.subscribe(subject, (message) => this.wake(message));
  }

  private wake(message: BusMessage): void {
    let event;
    try {
      event = fromJsonString(JobEventSchema, new TextDecoder().decode(message.data), { ignoreUnknownFields: true });
    } catch (error) {
      this.logger.warn({ err: error, subject: message.subject }, "job stream event not readable; skipped");
      return;
    }
    this.listeners.tell(event.jobId, event.event ? [event.event] : []);
  }
}
