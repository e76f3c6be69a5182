import type { Logger } from "../logger.js";
import { subjectMatches, type BusMessage, type EventBus } from "./bus.js";

/** The in-process bus: same subjects and wildcards as NATS, but events never leave the process. */
export class InProcessBus implements EventBus {
  private readonly subscribers = new Set<{ pattern: string; handler: (message: BusMessage) => void | Promise<void> }>();
  private readonly seen = new Set<string>();

  constructor(logger: Logger) {
    logger.info("NATS_URL is unset: events go to an in-process bus and do not leave this process");
  }

  async ensureStream(): Promise<void> {}

  async publish(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void> {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    for (const subscriber of this.subscribers) {
      if (subjectMatches(subscriber.pattern, subject)) await subscriber.handler({ subject, data, headers });
    }
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void | Promise<void>): () => void {
    const subscriber = { pattern, handler };
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
