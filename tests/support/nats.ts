import { randomBytes } from "node:crypto";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { streamName } from "../../services/kit/events/jetstream-bus.js";

/**
 * Test platforms share the machine's NATS server: each gets its own namespace
 * (PF_NATS_NAMESPACE), so one file's durable consumers never take another's
 * events, and its streams are deleted when it stops.
 */
export interface TestEvents {
  namespace: string;
  /** A spec subject as it travels on the wire. */
  subject(subject: string): string;
  /** The stream that keeps a service prefix's events. */
  stream(prefix: string): string;
}

export function newTestEvents(namespace = `t${process.pid}_${randomBytes(4).toString("hex")}`): TestEvents {
  return {
    namespace,
    subject: (subject) => `${namespace}.${subject}`,
    stream: (prefix) => streamName(prefix, namespace),
  };
}

/** Deletes every stream of a namespace. */
export async function deleteNamespaceStreams(url: string, events: TestEvents): Promise<void> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = events.stream("");
    for await (const name of jsm.streams.names())
      if (name.startsWith(prefix)) await jsm.streams.delete(name).catch(() => false);
  } finally {
    await nc.close();
  }
}

/** An event as a JetStream subscriber of its stream received it. */
export interface StreamMessage {
  id: string;
  // Test bodies are read field by field.
  body: any;
}

/**
 * A JetStream subscriber of one service's stream from now on, keeping the
 * messages of one subject: it sees what the stream keeps (resends dropped by
 * their Nats-Msg-Id), which is what "exactly once" is asserted against.
 */
export async function subscribeToStream(
  nc: NatsConnection,
  events: TestEvents,
  service: string,
  subject: string,
): Promise<{ received: StreamMessage[]; caughtUp: () => Promise<boolean>; stop: () => void }> {
  const consumer = await jetstream(nc).consumers.get(events.stream(service), {
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date().toISOString(),
  });
  const messages = await consumer.consume();
  const received: StreamMessage[] = [];
  let taken = 0;
  void (async () => {
    for await (const message of messages) {
      taken++;
      if (message.subject === events.subject(subject))
        received.push({ id: message.headers?.get("Nats-Msg-Id") ?? "", body: message.json() });
    }
  })();
  return { received, caughtUp: () => caughtUp(consumer, () => taken), stop: () => void messages.stop() };
}

/**
 * Whether a subscriber has taken every message its stream holds for it so far: the server has nothing more to
 * deliver and every message delivered was taken. Once true, a message that is not there was never in the stream.
 */
export async function caughtUp(
  consumer: { info(cached?: boolean): Promise<{ num_pending: number; delivered: { consumer_seq: number } }> },
  taken: () => number,
): Promise<boolean> {
  const info = await consumer.info(false);
  return info.num_pending === 0 && taken() >= info.delivered.consumer_seq;
}

/**
 * Whether a durable consumer has taken and acknowledged every event of its stream so far (nothing left to deliver
 * or to deliver again): the moment after which an event it handled is never handled again.
 */
export async function durableCaughtUp(url: string, events: TestEvents, prefix: string, durable: string) {
  const nc = await connect({ servers: url });
  try {
    const info = await (await jetstreamManager(nc)).consumers.info(events.stream(prefix), durable);
    return info.num_pending === 0 && info.num_ack_pending === 0;
  } finally {
    await nc.close();
  }
}
