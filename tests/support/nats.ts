import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
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
