import type { Logger } from "../runtime/logger.js";
import { BatchFailure, subjectMatches, type BusMessage, type EventBus } from "./bus.js";

/** Event ids remembered to drop resends. */
const MAX_REMEMBERED = 100_000;
/** Events handed to a durable consumer at once, as JetStream's batches. */
const BATCH = 64;

interface Subscriber {
  pattern: string;
  /** A plain subscriber: each event, its failure logged. */
  each?: (message: BusMessage) => void | Promise<void>;
  /** A durable consumer: the events queued for it together; a failure fails the publish, so the relay sends it again. */
  batch?: (messages: BusMessage[]) => Promise<void>;
}

/** A published event waiting for its delivery; settled once every subscriber has it (or it failed). */
interface Publication {
  id: string;
  message: BusMessage;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One service's events, delivered in the order published. */
interface Queue {
  waiting: Publication[];
  draining: boolean;
  failedAhead: boolean;
}

/** The in-process bus: same subjects and wildcards as NATS, but events never leave the process. */
export class InProcessBus implements EventBus {
  private readonly subscribers = new Set<Subscriber>();
  private readonly delivered = new Set<string>();
  private readonly queues = new Map<string, Queue>();

  constructor(private readonly logger: Logger) {
    logger.info("NATS_URL is unset: events go to an in-process bus and do not leave this process");
  }

  async ensureStream(): Promise<void> {}

  /**
   * Events are delivered in the order published, as a JetStream consumer
   * receives them: those published while a delivery runs go to each durable
   * consumer together next (a relay's batch is applied as one, not event after
   * event). Once a consumer fails, the events of the same service queued
   * behind it fail too, so its relay sends them again after it, in order. Each
   * service's events queue on their own.
   */
  publish(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void> {
    const prefix = subject.slice(0, subject.indexOf("."));
    let queue = this.queues.get(prefix);
    if (!queue) this.queues.set(prefix, (queue = { waiting: [], draining: false, failedAhead: false }));
    const own = queue;
    return new Promise<void>((resolve, reject) => {
      own.waiting.push({ id, message: { subject, data, headers }, resolve, reject });
      if (own.draining) return;
      own.draining = true;
      // After the publisher's own loop: the events it publishes together are delivered together.
      queueMicrotask(() => void this.drain(own));
    });
  }

  private async drain(queue: Queue): Promise<void> {
    while (queue.waiting.length > 0) {
      const round = queue.waiting.splice(0, BATCH);
      if (queue.failedAhead) {
        const behind = new Error("an earlier event failed; this one waits to be sent again after it");
        for (const publication of round) publication.reject(behind);
        continue;
      }
      const { delivered, error } = await this.deliver(round);
      for (const [index, publication] of round.entries()) {
        if (index < delivered) publication.resolve();
        else publication.reject(error);
      }
      if (delivered < round.length) queue.failedAhead = true;
    }
    queue.failedAhead = false;
    queue.draining = false;
  }

  /**
   * Delivers a round: each plain subscriber its events first, one by one (they only wake their listeners), then
   * each durable consumer its events together. Answers how many of the round, in order, every subscriber has, and
   * the first failure.
   */
  private async deliver(round: Publication[]): Promise<{ delivered: number; error?: unknown }> {
    // A resend of an event delivered before (or earlier in this round) is not delivered again.
    const seen = new Set<string>();
    const fresh = round.flatMap((publication, index) => {
      const again = this.delivered.has(publication.id) || seen.has(publication.id);
      seen.add(publication.id);
      return again ? [] : [{ publication, index }];
    });
    let delivered = round.length;
    let error: unknown;
    const subscribers = [...this.subscribers];
    for (const subscriber of subscribers.filter((s) => s.each)) {
      for (const { publication } of fresh) {
        if (!subjectMatches(subscriber.pattern, publication.message.subject)) continue;
        await Promise.resolve(subscriber.each!(publication.message)).catch((failure: unknown) =>
          this.logger.warn({ err: failure, subject: publication.message.subject }, "event subscriber failed"),
        );
      }
    }
    for (const subscriber of subscribers.filter((s) => s.batch)) {
      const mine = fresh.filter(
        ({ publication, index }) =>
          index < delivered && subjectMatches(subscriber.pattern, publication.message.subject),
      );
      if (mine.length === 0) continue;
      try {
        await subscriber.batch!(mine.map(({ publication }) => publication.message));
      } catch (failure) {
        const applied = failure instanceof BatchFailure ? failure.applied : new Set<number>();
        const first = mine.findIndex((_, position) => !applied.has(position));
        delivered = Math.min(delivered, mine[first === -1 ? 0 : first].index);
        error = failure instanceof BatchFailure ? failure.cause : failure;
      }
    }
    for (const { publication, index } of fresh) if (index < delivered) this.remember(publication.id);
    return { delivered, error };
  }

  private remember(id: string): void {
    this.delivered.add(id);
    // Resends come within minutes; older ids need not be remembered.
    if (this.delivered.size > MAX_REMEMBERED) this.delivered.delete(this.delivered.values().next().value as string);
  }

  async consume(
    subject: string,
    _durable: string,
    _from: "all" | "new",
    handler: (messages: BusMessage[]) => Promise<void>,
  ) {
    const subscriber = { pattern: subject, batch: handler };
    this.subscribers.add(subscriber);
    return async () => void this.subscribers.delete(subscriber);
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void | Promise<void>): () => void {
    const subscriber = { pattern, each: handler };
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  connected(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.subscribers.clear();
  }
}
