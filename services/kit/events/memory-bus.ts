import type { Logger } from "../runtime/logger.js";
import { subjectMatches, type BusMessage, type EventBus } from "./bus.js";

/** Event ids remembered to drop resends. */
const MAX_REMEMBERED = 100_000;

interface Subscriber {
  pattern: string;
  handler: (message: BusMessage) => void | Promise<void>;
  /** A consumer's failure fails the publish, so the relay sends the event again. */
  redeliver: boolean;
}

/** The in-process bus: same subjects and wildcards as NATS, but events never leave the process. */
export class InProcessBus implements EventBus {
  private readonly subscribers = new Set<Subscriber>();
  private readonly delivered = new Set<string>();
  private readonly queues = new Map<string, { last: Promise<void>; queued: number; failedAhead: boolean }>();

  constructor(private readonly logger: Logger) {
    logger.info("NATS_URL is unset: events go to an in-process bus and do not leave this process");
  }

  async ensureStream(): Promise<void> {}

  /**
   * Events are delivered one at a time, in the order published, as a JetStream
   * consumer receives them; once a consumer fails, the events of the same
   * service queued behind it fail too, so its relay sends them again after it,
   * in order. Each service's events queue on their own.
   */
  publish(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void> {
    const prefix = subject.slice(0, subject.indexOf("."));
    let queue = this.queues.get(prefix);
    if (!queue) this.queues.set(prefix, (queue = { last: Promise.resolve(), queued: 0, failedAhead: false }));
    const own = queue;
    own.queued++;
    const delivery = own.last.then(() => {
      if (own.failedAhead) throw new Error("an earlier event failed; this one waits to be sent again after it");
      return this.deliver(subject, id, data, headers).catch((error: unknown) => {
        own.failedAhead = true;
        throw error;
      });
    });
    own.last = delivery
      .catch(() => undefined)
      .finally(() => {
        if (--own.queued === 0) own.failedAhead = false;
      });
    return delivery;
  }

  private async deliver(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void> {
    if (this.delivered.has(id)) return;
    for (const subscriber of this.subscribers) {
      if (!subjectMatches(subscriber.pattern, subject)) continue;
      if (subscriber.redeliver) {
        await subscriber.handler({ subject, data, headers });
      } else {
        await Promise.resolve(subscriber.handler({ subject, data, headers })).catch((error: unknown) =>
          this.logger.warn({ err: error, subject }, "event subscriber failed"),
        );
      }
    }
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
    // One event at a time, as it is published.
    const subscriber = { pattern: subject, handler: (message: BusMessage) => handler([message]), redeliver: true };
    this.subscribers.add(subscriber);
    return async () => void this.subscribers.delete(subscriber);
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void | Promise<void>): () => void {
    const subscriber = { pattern, handler, redeliver: false };
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
