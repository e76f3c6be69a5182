import { fromJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { SpanKind } from "@opentelemetry/api";
import { sql } from "../db/sql.js";
import { retriedWhole } from "../db/transaction.js";
import { contextOf, inSpan, tracingOn } from "../runtime/tracing.js";
import { BatchFailure, type BusMessage, type EventBus } from "./bus.js";

/** What a consumer runs on: the service's key, bus, database and transactions (a service context is one). */
export interface ConsumerHost {
  key: string;
  bus: EventBus;
  orm: MikroORM;
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
  /**
   * With `outside`: its `handle` writes nothing (an effect's), so a batch's inbox marks go in one statement of their
   * own, without a transaction around it (two round trips fewer per batch).
   */
  marksOnly?: boolean;
  /**
   * The batch's writes flushed once, at its end, instead of after each event: for handlers that read what an earlier
   * event of the batch wrote only through the entities the transaction holds, never by a statement (run's device
   * events: a job's start, output and exit are one stream-event insert and one job update). Should that flush fail,
   * the batch is applied again flushing after each event, so the failure is its event's.
   */
  flushOnce?: boolean;
  /**
   * What `outside` must keep in order (the object an effect changes): events of one key run in order, those of
   * different keys in a batch side by side. Without it, every event waits for the one before it.
   */
  orderKey?(event: MessageShape<Desc>): string;
}

/** Keys of a batch whose work outside runs at once: all of a JetStream batch (16 drained a backlog a fifth slower in the bench). */
const SIDE_BY_SIDE = 64;

/** Declares a consumer with its event type checked. */
export function consumer<C extends ConsumerHost, Desc extends DescMessage>(definition: Consumer<C, Desc>): Consumer<C> {
  return definition as unknown as Consumer<C>;
}

/** An event as a consumer applies it. */
interface Delivery {
  event: MessageShape<DescMessage>;
  meta: EventMeta;
  traceparent?: string;
}

/**
 * The handler that applies each delivery once: the inbox row (consumer, event
 * id) and the consumer's own writes commit together, so a redelivery after a
 * crash or a lost ack finds the row and does nothing. A consumer without
 * `outside` applies a batch in one transaction (`together`); one with it (an effect) reads which of its events the
 * inbox holds and, after the work outside of those that were not, marks them in one transaction.
 */
export function inboxHandler<C extends ConsumerHost>(
  ctx: C,
  definition: Consumer<C>,
): (messages: BusMessage[]) => Promise<void> {
  const decoder = new TextDecoder();
  const deliveryOf = (message: BusMessage): Delivery => {
    const id = message.headers["Nats-Msg-Id"];
    if (!id) throw new Error(`event on ${message.subject} has no Nats-Msg-Id`);
    // Newer producers may add fields this consumer does not know yet.
    const event = fromJsonString(definition.event, decoder.decode(message.data), { ignoreUnknownFields: true });
    return { event, meta: { id, subject: message.subject }, traceparent: message.headers.traceparent };
  };
  const span = tracingOn() ? traced(`${ctx.key}/${definition.name}`, `${ctx.key}_${definition.name}`) : untraced;
  if (definition.outside) return outsideInBatches(ctx, definition, definition.outside, deliveryOf, span);
  const handleFresh = (em: EntityManager, delivery: Delivery) =>
    span(delivery, () => definition.handle(delivery.event, em, delivery.meta, ctx));
  const applyOne = async (em: EntityManager, delivery: Delivery) => {
    const fresh = await markHandled(em, definition.name, [delivery.meta.id]);
    if (fresh.size > 0) await handleFresh(em, delivery);
  };
  return async (messages) => {
    // A batch's events that decode go together; one that does not fails alone, in its turn, below.
    const decoded = messages.length > 1 ? decodedPrefix(messages, deliveryOf) : [];
    const { applied, failure } =
      decoded.length > 1
        ? await together(ctx, definition.name, decoded, handleFresh, !definition.flushOnce)
        : { applied: 0 };
    if (failure !== undefined)
      throw new BatchFailure(new Set(Array.from({ length: applied }, (_, before) => before)), failure);
    for (let index = applied; index < messages.length; index++) {
      try {
        await ctx.transaction((em) => applyOne(em, deliveryOf(messages[index])));
      } catch (error) {
        throw new BatchFailure(new Set(Array.from({ length: index }, (_, before) => before)), error);
      }
    }
  };
}

/** The deliveries of a batch up to its first event that does not decode. */
function decodedPrefix(messages: BusMessage[], deliveryOf: (message: BusMessage) => Delivery): Delivery[] {
  const deliveries: Delivery[] = [];
  for (const message of messages) {
    try {
      deliveries.push(deliveryOf(message));
    } catch {
      break;
    }
  }
  return deliveries;
}

/**
 * Applies deliveries in order in one transaction (one commit for a batch, not one per event), their inbox rows
 * written first in one statement. Should one fail, the transaction is rolled back whole and the ones before it are
 * applied again without it, in a transaction of their own: the failing one is the batch's failure (tried again after
 * the bus's pause, as a single event's). No savepoint per event: a failure is rare, and two statements per event
 * were a fifth of a job's on its way to its stream (run's consumer of bot's events). A serialization failure or
 * deadlock runs the whole batch again at once instead, as it does a single event's transaction. Each event's writes
 * are flushed after it (`flushEach`), or once at the end for a consumer that declares `flushOnce`. Answers how many
 * were applied.
 */
async function together<C extends ConsumerHost>(
  ctx: C,
  name: string,
  deliveries: Delivery[],
  handleFresh: (em: EntityManager, delivery: Delivery) => Promise<void>,
  flushEach: boolean,
): Promise<{ applied: number; failure?: unknown }> {
  try {
    return await ctx.transaction(async (em) => {
      const fresh = await markHandled(
        em,
        name,
        deliveries.map((delivery) => delivery.meta.id),
      );
      for (const [index, delivery] of deliveries.entries()) {
        // A redelivery of an event already in this batch is applied with the first.
        if (!fresh.delete(delivery.meta.id)) continue;
        try {
          await handleFresh(em, delivery);
          // Written now: the next event's statements see it.
          if (flushEach) await em.flush();
        } catch (failure) {
          if (retriedWhole(failure)) throw failure;
          throw new FailedAt(index, failure);
        }
      }
      if (!flushEach)
        await em.flush().catch((failure: unknown) => {
          throw retriedWhole(failure) ? failure : new FlushFailed();
        });
      return { applied: deliveries.length };
    });
  } catch (error) {
    // Whose write failed is known only flushing after each event: the batch again, so.
    if (error instanceof FlushFailed) return together(ctx, name, deliveries, handleFresh, true);
    if (!(error instanceof FailedAt)) throw error;
    if (error.index === 0) return { applied: 0, failure: error.failure };
    const before = await together(ctx, name, deliveries.slice(0, error.index), handleFresh, flushEach);
    return before.failure === undefined ? { applied: error.index, failure: error.failure } : before;
  }
}

/** The batch's one flush failed (`flushOnce`): which event's write it was is not known. */
class FlushFailed extends Error {
  constructor() {
    super("the batch's flush failed");
  }
}

/** The delivery at `index` of a batch failed with `failure`: the batch's transaction rolls back. */
class FailedAt extends Error {
  constructor(
    readonly index: number,
    readonly failure: unknown,
  ) {
    super("a delivery of the batch failed");
  }
}

/**
 * A batch of an effect-like consumer: which events the inbox holds, in one
 * statement; the work outside for the others, in order per `orderKey` (a
 * key stops at its first failure, the others go on); then the inbox marks
 * (and `handle`) of those done, in one transaction. A crash before that mark
 * does the work again (the effect's key is the same).
 */
function outsideInBatches<C extends ConsumerHost>(
  ctx: C,
  definition: Consumer<C>,
  outside: NonNullable<Consumer<C>["outside"]>,
  deliveryOf: (message: BusMessage) => Delivery,
  span: Span,
): (messages: BusMessage[]) => Promise<void> {
  return async (messages) => {
    const deliveries = messages.map(deliveryOf);
    // One statement of its own: a read needs no transaction.
    const handled = await handledOf(
      ctx.orm.em.fork(),
      definition.name,
      deliveries.map((delivery) => delivery.meta.id),
    );
    const applied = new Set<number>();
    const keys = new Map<string, number[]>();
    for (const [index, { event, meta }] of deliveries.entries()) {
      // Handled before, or a redelivery of an event already in this batch (handled with it).
      if (handled.has(meta.id)) applied.add(index);
      else {
        const key = definition.orderKey?.(event) ?? "";
        keys.set(key, [...(keys.get(key) ?? []), index]);
      }
      handled.add(meta.id);
    }
    const done: Delivery[] = [];
    let failure: unknown;
    const queue = [...keys.values()];
    const runKeys = async () => {
      for (let indices = queue.shift(); indices; indices = queue.shift())
        for (const index of indices) {
          const delivery = deliveries[index];
          try {
            await span(delivery, () => outside(delivery.event, delivery.meta, ctx));
          } catch (error) {
            failure ??= error;
            break;
          }
          applied.add(index);
          done.push(delivery);
        }
    };
    await Promise.all(Array.from({ length: Math.min(SIDE_BY_SIDE, queue.length) }, runKeys));
    const ids = done.map((delivery) => delivery.meta.id);
    if (done.length > 0 && definition.marksOnly) await markHandled(ctx.orm.em.fork(), definition.name, ids);
    else if (done.length > 0) {
      await ctx.transaction(async (em) => {
        const fresh = await markHandled(em, definition.name, ids);
        for (const { event, meta } of done) if (fresh.has(meta.id)) await definition.handle(event, em, meta, ctx);
      });
    }
    if (failure !== undefined) throw new BatchFailure(applied, failure);
  };
}

/** Which of `ids` the inbox holds for the consumer. */
async function handledOf(em: EntityManager, name: string, ids: string[]): Promise<Set<string>> {
  const rows: { event_id: string }[] = await sql(
    em,
    `select event_id from {inbox} where consumer = ? and event_id in (${ids.map(() => "?").join(", ")})`,
    [name, ...ids],
  );
  return new Set(rows.map((row) => row.event_id));
}

/** Marks `ids` handled by the consumer (in the caller's transaction, if any); answers those not marked before. */
async function markHandled(em: EntityManager, name: string, ids: string[]): Promise<Set<string>> {
  const rows: { event_id: string }[] = await sql(
    em,
    `insert into {inbox} (consumer, event_id) values ${ids.map(() => "(?, ?)").join(", ")}
       on conflict do nothing returning event_id`,
    ids.flatMap((id) => [name, id]),
  );
  return new Set(rows.map((row) => row.event_id));
}

/** Runs a delivery's work, in a span or not. */
type Span = <T>(delivery: Delivery, work: () => Promise<T>) => Promise<T>;

const untraced: Span = (_delivery, work) => work();

/**
 * Each delivery applied in a span named `<service>/<consumer>`, child of the
 * span that wrote the event (the `traceparent` its outbox row carried onto the
 * message): one trace from the request that made the change to its consumers.
 */
function traced(name: string, durable: string): Span {
  return (delivery, work) => {
    const attributes = {
      "messaging.system": "nats",
      "messaging.operation.type": "process",
      "messaging.destination.name": delivery.meta.subject,
      "messaging.message.id": delivery.meta.id,
      "messaging.consumer.group.name": durable,
    };
    return inSpan(name, { kind: SpanKind.CONSUMER, attributes }, contextOf(delivery.traceparent), work);
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
