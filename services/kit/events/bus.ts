/** A published event as subscribers see it. */
export interface BusMessage {
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
}

/** A batch handler's failure after applying some of its events (their places in the batch): those are acknowledged, the rest tried again. */
export class BatchFailure extends Error {
  constructor(
    readonly applied: ReadonlySet<number>,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** Where the outbox relay sends events: JetStream, or the in-process bus when NATS_URL is unset. */
export interface EventBus {
  /** Ensures the stream for a service's subject prefix exists. */
  ensureStream(prefix: string): Promise<void>;
  /** Publishes once: `id` deduplicates resends (Nats-Msg-Id). */
  publish(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void>;
  /**
   * A durable consumer: every event on `subject` from `from` on, in order, redelivered until `handler`
   * applies it (at least once; the kit's inbox makes the effect once). The handler is given the events
   * delivered and not yet applied, at most 64 at a time (on the in-process bus, those published together); a
   * failure is tried again after a pause with the rest of its batch, less those it applied (`BatchFailure`).
   */
  consume(
    subject: string,
    durable: string,
    from: "all" | "new",
    handler: (messages: BusMessage[]) => Promise<void>,
  ): Promise<() => Promise<void>>;
  /**
   * Events on `subject` a durable consumer has not acknowledged yet (its lag),
   * where the bus keeps them: absent on the in-process bus, which delivers
   * each event while its relay publishes it.
   */
  pending?(subject: string, durable: string): Promise<number>;
  /**
   * How long the stream for `prefix` drops a resend by its id (JetStream's duplicate window, as the stream is
   * configured), and the ids of its last `count` messages: past the window the relay asks the stream before
   * sending an event again (`outbox-resends.ts`). Absent on the in-process bus, which drops every resend it remembers.
   */
  duplicateWindowMs?(prefix: string): number | undefined;
  recentIds?(prefix: string, count: number): Promise<string[]>;
  /** Subscribes to a subject pattern (`*` one token, `>` the rest); nothing is redelivered. */
  subscribe(pattern: string, handler: (message: BusMessage) => void | Promise<void>): () => void;
  /** True when events can leave the process now. */
  connected(): boolean;
  close(): Promise<void>;
}

/** NATS subject matching: `*` matches one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split(".");
  const have = subject.split(".");
  for (let i = 0; i < want.length; i++) {
    if (want[i] === ">") return have.length > i;
    if (i >= have.length) return false;
    if (want[i] !== "*" && want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}
