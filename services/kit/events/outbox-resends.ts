import type { EventBus } from "./bus.js";

/**
 * The stream's last messages read when asking it: every event a relay published without marking it sent lies
 * among them. A relay publishes at most two batches (500 each) beyond its marks, and after a failure nothing but
 * the failed event, alone, until it is marked; its successor starts where it stopped. The service's relay is its
 * stream's only publisher.
 */
export const RECENT_MESSAGES = 2_000;

/** An outbox row as the relay reads it, with whether it was written longer ago than a resend is surely dropped. */
export interface ResendCandidate {
  id: string;
  /** Written more than half the stream's duplicate window ago (the database's clock): the stream may keep a resend. */
  aged: boolean;
}

/**
 * Exactly once to the stream across a restart (docs/operations.md, "Events"). JetStream drops a resend by its
 * Nats-Msg-Id only within its duplicate window (two minutes): an event acknowledged whose relay died before
 * marking it sent, or whose acknowledgement was lost, is published again by the next pass, and past the window the
 * stream would keep it twice. So while rows may be in the stream unmarked (after taking the lease, after a pass
 * that did not end cleanly), before publishing an aged event the relay reads the ids of the stream's last
 * messages, once; the events found there are marked sent without being published again. Fresh events need no
 * question: a resend of them is dropped.
 */
export class OutboxResends {
  /** Rows may be in the stream unmarked, and the stream has not been asked since. */
  private unsure = true;
  /** Ids the stream holds, from its last answer, not yet matched to a row. */
  private readonly held = new Set<string>();

  constructor(
    private readonly bus: EventBus,
    private readonly prefix: string,
  ) {}

  /** How old a row must be to be asked about (null: never; the bus drops every resend it remembers). */
  agedAfterMs(): number | null {
    const window = this.bus.duplicateWindowMs?.(this.prefix);
    return window === undefined || !this.bus.recentIds ? null : Math.floor(window / 2);
  }

  /** Rows may be in the stream unmarked: after the lease was taken, and after a pass that stopped part way. */
  doubt(): void {
    this.unsure = true;
    this.held.clear();
  }

  /** The rows of `batch` the stream holds already, asking it first when in doubt and one of them is aged. */
  async inStream(batch: ResendCandidate[]): Promise<Set<string>> {
    if (this.unsure && this.bus.recentIds && batch.some((row) => row.aged)) {
      for (const id of await this.bus.recentIds(this.prefix, RECENT_MESSAGES)) this.held.add(id);
      this.unsure = false;
    }
    const found = new Set<string>();
    for (const row of batch) if (this.held.delete(row.id)) found.add(row.id);
    return found;
  }
}
