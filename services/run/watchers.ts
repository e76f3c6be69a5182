import { fromJsonString } from "@bufbuild/protobuf";
import { JobEventSchema } from "../../gen/pf/run/v1/events_pb.js";
import type { BusMessage, EventBus } from "../kit/events/bus.js";
import type { Logger } from "../kit/runtime/logger.js";
import { streamSubjects } from "./events.js";

/**
 * What wakes one instance's open job streams: one bus subscription per stream subject (not one per stream), each
 * run.job.* event fanned out to the streams of its job, which then read the job's persisted stream again. The events
 * leave the outbox only after their commit, so a woken stream finds what woke it. Not durable: a wake missed is made
 * up by the stream's own recheck (PF_RUN_STREAM_RECHECK_MS).
 */
export class JobWatchers {
  private readonly listeners = new Map<string, Set<() => void>>();
  private subscribed = false;

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Calls `wake` after each committed stream event of the job until the answer is called. */
  watch(jobId: string, wake: () => void): () => void {
    if (!this.subscribed) this.subscribe();
    let own = this.listeners.get(jobId);
    if (!own) this.listeners.set(jobId, (own = new Set()));
    own.add(wake);
    return () => {
      own.delete(wake);
      if (own.size === 0 && this.listeners.get(jobId) === own) this.listeners.delete(jobId);
    };
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
    for (const wake of this.listeners.get(jobId) ?? []) wake();
  }
}

/**
 * One open stream's wait for news: `next` resolves at the next wake (at once if one came since the last `next`),
 * after `timeoutMs`, or when the stream's client goes away.
 */
export class Wakes {
  private woken = false;
  private resolve?: () => void;

  constructor(private readonly signal: AbortSignal) {}

  /** Something may have happened: the waiting `next` returns. */
  readonly wake = (): void => {
    this.woken = true;
    this.resolve?.();
  };

  async next(timeoutMs: number): Promise<void> {
    if (!this.woken && !this.signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.signal.removeEventListener("abort", done);
          this.resolve = undefined;
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.signal.addEventListener("abort", done, { once: true });
        this.resolve = done;
      });
    }
    this.woken = false;
  }
}
