import type { BusMessage, EventBus } from "../../kit/events/bus.js";
import type { Logger } from "../../kit/runtime/logger.js";
import { subjects } from "../events.js";
import { decodeLive, type LiveEvent } from "./events.js";

type Listener = (event: LiveEvent) => void;

/**
 * The live feed of one instance's open overlay streams: one bus subscription
 * per subject (not one per stream), fanned out to the streams of the event's
 * creator. Non-durable: a stream that was not open missed nothing it cannot
 * resume (see the stream's Last-Event-ID replay).
 */
export class OverlayHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Set once the first stream listens; the subscriptions end with the bus. */
  private subscribed = false;

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Calls `listener` with each event of the creator until the answer is called. */
  listen(creator: string, listener: Listener): () => void {
    if (!this.subscribed) this.subscribe();
    let own = this.listeners.get(creator);
    if (!own) this.listeners.set(creator, (own = new Set()));
    own.add(listener);
    return () => {
      own.delete(listener);
      if (own.size === 0 && this.listeners.get(creator) === own) this.listeners.delete(creator);
    };
  }

  private subscribe(): void {
    this.subscribed = true;
    for (const subject of Object.values(subjects)) this.bus.subscribe(subject, (message) => this.dispatch(message));
  }

  private dispatch(message: BusMessage): void {
    let event: LiveEvent | undefined;
    try {
      event = decodeLive(message);
    } catch (error) {
      this.logger.warn({ err: error, subject: message.subject }, "overlay stream event not readable; skipped");
      return;
    }
    if (!event) return;
    for (const listener of this.listeners.get(event.creator) ?? []) listener(event);
  }
}
