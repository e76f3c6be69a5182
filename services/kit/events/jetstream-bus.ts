import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JsMsg,
} from "@nats-io/jetstream";
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { SpanKind } from "@opentelemetry/api";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../runtime/logger.js";
import { contextOf, inSpan } from "../runtime/tracing.js";
import { BatchFailure, type BusMessage, type EventBus } from "./bus.js";

/** Resends within two minutes are dropped by their Nats-Msg-Id; the relay asks the stream before later ones. */
const DUPLICATE_WINDOW_NS = 120 * 1e9;
/** Events are kept a week: long enough for a consumer that was down to catch up. */
const RETENTION_NS = 7 * 24 * 3600 * 1e9;
/**
 * An event delivered and neither acked nor reported in progress within this
 * is delivered again: a crashed consumer's events come back within seconds.
 */
export const CONSUMER_ACK_WAIT_MS = 5_000;
/** A running handler reports it is still at work this often, well inside the ack wait. */
const CONSUMER_WORKING_EVERY_MS = 2_000;
/** Events pulled at once, and unacked at most, per durable consumer: a backlog drains without a round trip per event. */
const CONSUMER_BATCH = 64;

/**
 * Events on NATS JetStream: one stream per service prefix, resends dropped by
 * Nats-Msg-Id. Under a namespace (config `natsNamespace`) every subject goes
 * out as `<namespace>.<subject>` and comes back to handlers without it.
 */
export class JetStreamBus implements EventBus {
  private readonly js: JetStreamClient;
  private isConnected = true;
  /** Each stream's duplicate window (ms) as configured, read when the stream is ensured. */
  private readonly windows = new Map<string, number>();

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
      // No stack captured per request (each publish and each pull is one): 3–5% of the CPU on the event paths in the
      // benches' profiles. A request's failure still says what failed; only its async stack is gone.
      noAsyncTraces: true,
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
    const info = await jsm.streams.info(name).catch(() =>
      jsm.streams
        .add({
          name,
          subjects: [`${this.wire(prefix)}.>`],
          duplicate_window: DUPLICATE_WINDOW_NS,
          max_age: RETENTION_NS,
        })
        .catch(async (error: unknown) => {
          // Another instance created it first.
          return jsm.streams.info(name).catch(() => {
            throw error;
          });
        }),
    );
    // The stream's own window: one made elsewhere, or under other settings, keeps its own.
    this.windows.set(prefix, (info.config.duplicate_window ?? DUPLICATE_WINDOW_NS) / 1e6);
  }

  duplicateWindowMs(prefix: string): number {
    return this.windows.get(prefix) ?? DUPLICATE_WINDOW_NS / 1e6;
  }

  /** The Nats-Msg-Ids of the stream's last `count` messages, read by an ordered consumer taking headers only. */
  async recentIds(prefix: string, count: number): Promise<string[]> {
    const name = streamName(prefix, this.namespace);
    const jsm = await jetstreamManager(this.nc, { timeout: 5_000 });
    const { state } = await jsm.streams.info(name);
    if (state.messages === 0) return [];
    const consumer = await this.js.consumers.get(name, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(state.first_seq, state.last_seq - count + 1),
      headers_only: true,
    });
    const ids: string[] = [];
    try {
      for (let done = false; !done;) {
        let read = 0;
        for await (const message of await consumer.fetch({ max_messages: 1_000, expires: 2_000 })) {
          read++;
          const id = message.headers?.get("Nats-Msg-Id");
          if (id) ids.push(id);
          done ||= message.seq >= state.last_seq || message.info.pending === 0;
        }
        // Nothing came within the fetch's wait: a partial answer would let a resend through.
        if (read === 0 && !done) throw new Error(`stream ${name} did not answer its last messages`);
      }
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return ids;
  }

  async publish(subject: string, id: string, data: Uint8Array, headers: Record<string, string>): Promise<void> {
    const h = natsHeaders();
    for (const [name, value] of Object.entries(headers)) h.set(name, value);
    const send = () => this.js.publish(this.wire(subject), data, { msgID: id, headers: h, timeout: 5_000 });
    if (!headers.traceparent) return void (await send());
    // The send is a span of the event's trace (tracing on); the message still carries the writer's span, its consumers' parent.
    const attributes = {
      "messaging.system": "nats",
      "messaging.destination.name": this.wire(subject),
      "messaging.message.id": id,
    };
    await inSpan(`publish ${subject}`, { kind: SpanKind.PRODUCER, attributes }, contextOf(headers.traceparent), send);
  }

  async consume(
    subject: string,
    durable: string,
    from: "all" | "new",
    handler: (messages: BusMessage[]) => Promise<void>,
  ) {
    const prefix = subject.split(".")[0];
    await this.ensureStream(prefix);
    const stream = streamName(prefix, this.namespace);
    await this.ensureConsumer(stream, durable, subject, from);
    const consumer = await this.js.consumers.get(stream, durable);
    const messages = await consumer.consume({ max_messages: CONSUMER_BATCH });
    const stopping = new AbortController();
    // Delivered and not yet handed to the handler: at most max_ack_pending, the server sends no more unacked.
    const delivered: JsMsg[] = [];
    const unacked = new Set<JsMsg>();
    let arrived: (() => void) | undefined;
    const reading = (async () => {
      for await (const message of messages) {
        delivered.push(message);
        unacked.add(message);
        arrived?.();
      }
    })().finally(() => stopping.abort());
    // Every event delivered and not acknowledged, waiting or being applied, is not redelivered meanwhile.
    const heartbeat = setInterval(
      () => unacked.forEach((message) => quietly(() => message.working())),
      CONSUMER_WORKING_EVERY_MS,
    );
    const ack = (message: JsMsg) => {
      unacked.delete(message);
      quietly(() => message.ack());
    };
    // One listener for the consumer's life (one per wait would pile up on the signal).
    stopping.signal.addEventListener("abort", () => arrived?.(), { once: true });
    const done = (async () => {
      while (!stopping.signal.aborted) {
        if (delivered.length === 0) {
          await new Promise<void>((resolve) => (arrived = resolve));
          arrived = undefined;
          continue;
        }
        // What arrived while the last batch was applied goes together: a backlog drains in batches.
        await this.applyBatch(delivered.splice(0, CONSUMER_BATCH), handler, ack, durable, stopping.signal);
      }
    })();
    return async () => {
      stopping.abort();
      await messages.close();
      await Promise.all([reading, done]);
      clearInterval(heartbeat);
    };
  }

  /**
   * Hands a batch to the handler until it is applied. A failure is tried again here, not nak'd, with the
   * rest of the batch: the events pulled after it wait, so order is kept; those it applied are acknowledged.
   */
  private async applyBatch(
    batch: JsMsg[],
    handler: (messages: BusMessage[]) => Promise<void>,
    ack: (message: JsMsg) => void,
    durable: string,
    signal: AbortSignal,
  ): Promise<void> {
    let rest = batch;
    for (let attempt = 1; rest.length > 0 && !signal.aborted; attempt++) {
      try {
        await handler(rest.map((message) => this.busMessage(message)));
        rest.forEach(ack);
        return;
      } catch (error) {
        const applied = error instanceof BatchFailure ? error.applied : new Set<number>();
        rest.filter((_, index) => applied.has(index)).forEach(ack);
        rest = rest.filter((_, index) => !applied.has(index));
        // Another event failing: its pauses start again from the shortest.
        if (applied.size > 0) attempt = 1;
        this.logger.warn(
          { err: error instanceof BatchFailure ? error.cause : error, subject: rest[0]?.subject, durable, attempt },
          "consumer failed; the event is tried again after a pause",
        );
        // Stopped mid-pause: left unacked, it is redelivered after the ack wait.
        await sleep(Math.min(30_000, 250 * 2 ** Math.min(attempt - 1, 7)), undefined, { signal }).catch(
          () => undefined,
        );
      }
    }
  }

  /** A message as handlers see it: the spec's subject, the first value of each header. */
  private busMessage(message: { subject: string; data: Uint8Array; headers?: JsMsg["headers"] }): BusMessage {
    const headers: Record<string, string> = {};
    for (const [name, values] of message.headers ?? []) headers[name] = values[0];
    return { subject: this.spec(message.subject), data: message.data, headers };
  }

  /** Creates the durable consumer, or brings one made under older settings up to the current ack wait and batch. */
  private async ensureConsumer(stream: string, durable: string, subject: string, from: "all" | "new"): Promise<void> {
    const jsm = await jetstreamManager(this.nc, { timeout: 5_000 });
    const wanted = { ack_wait: CONSUMER_ACK_WAIT_MS * 1e6, max_ack_pending: CONSUMER_BATCH };
    const info = await jsm.consumers.info(stream, durable).catch(() => undefined);
    if (!info) {
      await jsm.consumers
        .add(stream, {
          durable_name: durable,
          filter_subject: this.wire(subject),
          ack_policy: AckPolicy.Explicit,
          deliver_policy: from === "all" ? DeliverPolicy.All : DeliverPolicy.New,
          ...wanted,
        })
        // Another instance created it first.
        .catch((error: unknown) => jsm.consumers.info(stream, durable).catch(() => Promise.reject(error)));
    } else if (info.config.ack_wait !== wanted.ack_wait || info.config.max_ack_pending !== wanted.max_ack_pending) {
      await jsm.consumers.update(stream, durable, wanted);
    }
  }

  /** Not yet delivered, and delivered but not acknowledged. */
  async pending(subject: string, durable: string): Promise<number> {
    const jsm = await this.js.jetstreamManager(false);
    const info = await jsm.consumers.info(streamName(subject.split(".")[0], this.namespace), durable);
    return info.num_pending + info.num_ack_pending;
  }

  subscribe(pattern: string, handler: (message: BusMessage) => void | Promise<void>): () => void {
    const subscription = this.nc.subscribe(this.wire(pattern), {
      callback: (error, message) => {
        if (!error) void handler(this.busMessage(message));
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

/** An ack or heartbeat on a connection already closed (the instance stopping) changes nothing: the event comes back. */
function quietly(send: () => void): void {
  try {
    send();
  } catch {
    // Left unacked, it is redelivered after the ack wait.
  }
}
