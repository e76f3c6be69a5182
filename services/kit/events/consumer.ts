import { fromJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { SpanKind } from "@opentelemetry/api";
import { qualified } from "../db/orm.js";
import { contextOf, inSpan, tracingOn } from "../runtime/tracing.js";
import type { BusMessage, EventBus } from "./bus.js";

/** What a consumer runs on: the service's key, bus and transactions (a service context is one). */
export interface ConsumerHost {
  key: string;
  bus: EventBus;
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
}

/** Where an event came from: its id and subject. */
export interface EventMeta {
  id: string;
  subject: string;
}

/** What one durable consumer of a service does with each event of a subject, given the service's context. */
export interface Consumer<C extends ConsumerHost = ConsumerHost, Desc extends DescMessage = DescMessage> {
  /** Unique within the service; with the service key it names the durable consumer. */
  name: string;
  subject: string;
  /** The event's proto message. */
  event: Desc;
  /** Where a new consumer starts: the whole stream (projections) or new events only. */
  from?: "all" | "new";
  /** Applies one event in the service's transaction; the kit records it as handled in that same transaction. */
  handle(event: MessageShape<Desc>, em: EntityManager, meta: EventMeta, ctx: C): Promise<void>;
  /**
   * Work before that transaction and outside it, for an event not yet handled:
   * a call to another service (`effect()`, kit/effects). An error fails the
   * delivery, which comes again; it may run again after a crash before the mark.
   */
  outside?(event: MessageShape<Desc>, meta: EventMeta, ctx: C): Promise<void>;
}

/** Declares a consumer with its event type checked. */
export function consumer<C extends ConsumerHost, Desc extends DescMessage>(definition: Consumer<C, Desc>): Consumer<C> {
  return definition as unknown as Consumer<C>;
}

/**
 * The handler that applies each delivery once: the inbox row (consumer, event
 * id) and the consumer's own writes commit together, so a redelivery after a
 * crash or a lost ack finds the row and does nothing.
 */
export function inboxHandler<C extends ConsumerHost>(
  ctx: C,
  definition: Consumer<C>,
): (message: BusMessage) => Promise<void> {
  const decoder = new TextDecoder();
  const handle = async (message: BusMessage) => {
    const id = message.headers["Nats-Msg-Id"];
    if (!id) throw new Error(`event on ${message.subject} has no Nats-Msg-Id`);
    // Newer producers may add fields this consumer does not know yet.
    const event = fromJsonString(definition.event, decoder.decode(message.data), { ignoreUnknownFields: true });
    const meta = { id, subject: message.subject };
    if (definition.outside) {
      if (await handled(ctx, definition.name, id)) return;
      await definition.outside(event, meta, ctx);
    }
    await ctx.transaction(async (em) => {
      const fresh = await em
        .getConnection()
        .execute(
          `insert into ${qualified(em, "inbox")} (consumer, event_id) values (?, ?) on conflict do nothing returning event_id`,
          [definition.name, id],
          "all",
          em.getTransactionContext(),
        );
      if (fresh.length > 0) await definition.handle(event, em, meta, ctx);
    });
  };
  return tracingOn() ? traced(`${ctx.key}/${definition.name}`, `${ctx.key}_${definition.name}`, handle) : handle;
}

/** Whether the inbox holds the event for the consumer. */
function handled(ctx: ConsumerHost, name: string, id: string): Promise<boolean> {
  return ctx.transaction(async (em) => {
    const rows = await em
      .getConnection()
      .execute(
        `select 1 from ${qualified(em, "inbox")} where consumer = ? and event_id = ?`,
        [name, id],
        "all",
        em.getTransactionContext(),
      );
    return rows.length > 0;
  });
}

/**
 * Each delivery applied in a span named `<service>/<consumer>`, child of the
 * span that wrote the event (the `traceparent` its outbox row carried onto the
 * message): one trace from the request that made the change to its consumers.
 */
function traced(
  name: string,
  durable: string,
  handle: (message: BusMessage) => Promise<void>,
): (message: BusMessage) => Promise<void> {
  return (message) => {
    const attributes = {
      "messaging.system": "nats",
      "messaging.operation.type": "process",
      "messaging.destination.name": message.subject,
      "messaging.message.id": message.headers["Nats-Msg-Id"],
      "messaging.consumer.group.name": durable,
    };
    return inSpan(name, { kind: SpanKind.CONSUMER, attributes }, contextOf(message.headers.traceparent), () =>
      handle(message),
    );
  };
}

/** Starts a durable consumer; answers how to stop it. */
export function startConsumer<C extends ConsumerHost>(ctx: C, definition: Consumer<C>): Promise<() => Promise<void>> {
  return ctx.bus.consume(
    definition.subject,
    `${ctx.key}_${definition.name}`,
    definition.from ?? "all",
    inboxHandler(ctx, definition),
  );
}
