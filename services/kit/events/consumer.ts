import { fromJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../db/orm.js";
import type { ServiceContext } from "../module.js";
import type { BusMessage } from "./bus.js";

/** What one durable consumer of a service does with each event of a subject. */
export interface Consumer<Desc extends DescMessage = DescMessage> {
  /** Unique within the service; with the service key it names the durable consumer. */
  name: string;
  subject: string;
  /** The event's proto message. */
  event: Desc;
  /** Where a new consumer starts: the whole stream (projections) or new events only. */
  from?: "all" | "new";
  /** Applies one event in the service's transaction; the kit records it as handled in that same transaction. */
  handle(event: MessageShape<Desc>, em: EntityManager, meta: { id: string; subject: string }): Promise<void>;
}

/** Declares a consumer with its event type checked. */
export function consumer<Desc extends DescMessage>(definition: Consumer<Desc>): Consumer {
  return definition as unknown as Consumer;
}

/**
 * The handler that applies each delivery once: the inbox row (consumer, event
 * id) and the consumer's own writes commit together, so a redelivery after a
 * crash or a lost ack finds the row and does nothing.
 */
export function inboxHandler(ctx: ServiceContext, definition: Consumer): (message: BusMessage) => Promise<void> {
  const decoder = new TextDecoder();
  return async (message) => {
    const id = message.headers["Nats-Msg-Id"];
    if (!id) throw new Error(`event on ${message.subject} has no Nats-Msg-Id`);
    // Newer producers may add fields this consumer does not know yet.
    const event = fromJsonString(definition.event, decoder.decode(message.data), { ignoreUnknownFields: true });
    await ctx.transaction(async (em) => {
      const fresh = await em.getConnection().execute(
        `insert into ${qualified(em, "inbox")} (consumer, event_id) values (?, ?) on conflict do nothing returning event_id`,
        [definition.name, id],
        "all",
        em.getTransactionContext(),
      );
      if (fresh.length > 0) await definition.handle(event, em, { id, subject: message.subject });
    });
  };
}

/** Starts a durable consumer; answers how to stop it. */
export function startConsumer(ctx: ServiceContext, definition: Consumer): Promise<() => Promise<void>> {
  return ctx.bus.consume(definition.subject, `${ctx.key}_${definition.name}`, definition.from ?? "all", inboxHandler(ctx, definition));
}
