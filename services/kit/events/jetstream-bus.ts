import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../runtime/logger.js";
import type { BusMessage, EventBus } from "./bus.js";

/** Resends within two minutes are dropped by their Nats-Msg-Id. */
const DUPLICATE_WINDOW_NS = 120 * 1e9;
/** Events are kept a week: long enough for a consumer that was down to catch up. */
const RETENTION_NS = 7 * 24 * 3600 * 1e9;

/**
 * Events on NATS JetStream: one stream per service prefix, resends dropped by
 * Nats-Msg-Id. Under a namespace (config `natsNamespace`) every subject goes
 * out as `<namespace>.<subject>` and comes back to handlers without it.
 */
export class JetStreamBus implements EventBus {
  private readonly js: JetStreamClient;
  private isConnected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly logger: Logger,
    private readonly namespace?: string,
  ) {
    this.js = jetstream(nc, { timeout: 5_000 });
    void this.watchStatus();
  }

  /** Connects, waiting for the server if it is not up yet and reconnecting forever after. */
  static async connect(url: string, logger: Logger, namespace?: string): Promise<JetStreamBus> {
    logger.info({ nats: url }, "connecting to NATS (start waits until it answers)");
    const nc = await connect({
      servers: url,
      name: "pf",
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    return new JetStreamBus(nc, logger, namespace);
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === "disconnect") this.isConnected = false;
      if (status.type === "reconnect") this.isConnected = true;
      this.logger.debug({ nats: status.type }, "nats status");
    }
  }

  async ensureStream(prefix: string): Promise<void> {
    const jsm = await jetstreamManager(this.nc, { timeout: 5_000 });
    const name = streamName(prefix, this.namespace);
    try {
      await jsm.streams.info(name);
    } catch {
      await jsm.streams
        .add({
          name,
          subjects: [`${this.wire(prefix)}.>`],
          duplicate_window: DUPLICATE_WINDOW_NS,
          max_age: RETENTION_NS,
        })
        .catch(async (error: unknown) => {
          // Another instance created it first.
          await jsm.streams.info(name).catch(() => {
            throw error;
          });
        });
    }
  }

  async publish(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void> {
    const h = natsHeaders();
    for (const [name, value] of Object.entries(headers)) h.set(name, value);
    await this.js.publish(this.wire(subject), data, { msgID: id, headers: h, timeout: 5_000 });
  }

  async consume(
    subject: string,
    durable: string,
    from: "all" | "new",
    handler: (message: BusMessage) => Promise<void>,
  ) {
    const prefix = subject.split(".")[0];
    await this.ensureStream(prefix);
    const stream = streamName(prefix, this.namespace);
    const jsm = await jetstreamManager(this.nc, { timeout: 5_000 });
    await jsm.consumers.info(stream, durable).catch(() =>
      jsm.consumers.add(stream, {
        durable_name: durable,
        filter_subject: this.wire(subject),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: from === "all" ? DeliverPolicy.All : DeliverPolicy.New,
        ack_wait: 30_000_000_000,
        // One event at a time, so a redelivered event is applied before the ones after it.
        max_ack_pending: 1,
      }),
    );
    const consumer = await this.js.consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: 64 });
    const done = (async () => {
      for await (const message of messages) {
        const headers: Record<string, string> = {};
        for (const [name, values] of message.headers ?? []) headers[name] = values[0];
        try {
          await handler({ subject: this.spec(message.subject), data: message.data, headers });
          message.ack();
        } catch (error) {
          this.logger.warn(
            { err: error, subject: message.subject, durable },
            "consumer failed; the event will be redelivered",
          );
          message.nak(Math.min(30_000, 250 * 2 ** Math.min(message.info.deliveryCount, 7)));
        }
      }
    })();
    return async () => {
      await messages.close();
      await done;
    };
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void | Promise<void>): () => void {
    const subscription = this.nc.subscribe(this.wire(pattern), {
      callback: (error, message) => {
        if (error) return;
        const headers: Record<string, string> = {};
        for (const [name, values] of message.headers ?? []) headers[name] = values[0];
        void handler({ subject: this.spec(message.subject), data: message.data, headers });
      },
    });
    return () => subscription.unsubscribe();
  }

  /** The subject on the wire. */
  private wire(subject: string): string {
    return this.namespace ? `${this.namespace}.${subject}` : subject;
  }

  /** The spec's subject of one on the wire. */
  private spec(subject: string): string {
    return this.namespace ? subject.slice(this.namespace.length + 1) : subject;
  }

  connected(): boolean {
    return this.isConnected && !this.nc.isClosed();
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}

/** One stream per service prefix: `network.>` is kept in PF_NETWORK (PF_<NAMESPACE>_NETWORK under a namespace). */
export function streamName(prefix: string, namespace?: string): string {
  return namespace ? `PF_${namespace.toUpperCase()}_${prefix.toUpperCase()}` : `PF_${prefix.toUpperCase()}`;
}
