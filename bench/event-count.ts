import { DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

/** What a stream holds of the events a run committed, each counted by its key. */
export interface StreamCount {
  /** Committed events the stream does not hold. */
  missing: number;
  /** Committed events the stream holds more than once. */
  duplicated: number;
}

/** The last sequence of a service's stream (its name on the server) now: a run's events come after it. */
export async function streamEnd(nc: NatsConnection, stream: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(stream)).state.last_seq;
}

/**
 * Reads the stream's `subject` (both as on the server) after sequence `after` and checks that every
 * key of `committed` is there exactly once (`keyOf` names a stored message;
 * messages of other runs or writers answer keys not committed, and are left out).
 */
export async function countInStream(
  nc: NatsConnection,
  stream: string,
  subject: string,
  after: number,
  committed: Iterable<string>,
  keyOf: (message: JsMsg) => string,
): Promise<StreamCount> {
  const expected = new Map<string, number>();
  for (const key of committed) expected.set(key, 0);
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: after + 1,
  });
  for (let done = false; !done;) {
    let read = 0;
    for await (const message of await consumer.fetch({ max_messages: 1_000, expires: 2_000 })) {
      read++;
      const key = keyOf(message);
      const seen = expected.get(key);
      if (seen !== undefined) expected.set(key, seen + 1);
      done ||= message.info.pending === 0;
    }
    done ||= read === 0;
  }
  const counts = [...expected.values()];
  return { missing: counts.filter((n) => n === 0).length, duplicated: counts.filter((n) => n > 1).length };
}

/** Arrivals at a plain subscriber, each event counted by its key. */
export class Arrivals {
  /** Each key's first arrival (performance.now()). */
  readonly first = new Map<string, number>();
  /** Arrivals after the first of their key: resends the stream dropped still reach core subscribers. */
  again = 0;

  arrived(key: string): void {
    if (this.first.has(key)) this.again++;
    else this.first.set(key, performance.now());
  }

  /** Whether every committed key has arrived. */
  all(committed: Map<string, number>): boolean {
    for (const key of committed.keys()) if (!this.first.has(key)) return false;
    return true;
  }

  /**
   * Each committed event's latency from its commit time to its arrival,
   * sorted; an event may arrive before its writer got the answer to its
   * commit (timed 0, and counted `early`).
   */
  latencies(committed: Map<string, number>): { sorted: Float64Array; early: number; notSeen: number } {
    const latencies: number[] = [];
    let early = 0;
    for (const [key, at] of committed) {
      const arrival = this.first.get(key);
      if (arrival === undefined) continue;
      if (arrival < at) early++;
      latencies.push(Math.max(0, arrival - at));
    }
    return { sorted: Float64Array.from(latencies).sort(), early, notSeen: committed.size - latencies.length };
  }
}
