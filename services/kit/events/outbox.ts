import { toJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { getOption } from "@bufbuild/protobuf";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { schema as schemaOption } from "../../../gen/pf/v1/options_pb.js";
import { qualified } from "../db/orm.js";
import { newId } from "../ids.js";
import type { Logger } from "../logger.js";
import type { EventBus } from "./bus.js";

/**
 * Writes an event into the service's outbox in the caller's transaction, so
 * the event exists exactly when the change it reports does. The relay sends it.
 */
export async function recordEvent<Desc extends DescMessage>(
  em: EntityManager,
  subject: string,
  desc: Desc,
  event: MessageShape<Desc>,
): Promise<string> {
  const id = newId("evt");
  const schemaId = getOption(desc, schemaOption) || desc.typeName;
  await em.getConnection().execute(
    `insert into ${qualified(em, "outbox")} (id, subject, schema_id, payload) values (?, ?, ?, ?)`,
    [id, subject, schemaId, toJsonString(desc, event, { useProtoFieldName: true, alwaysEmitImplicit: true })],
    "run",
    em.getTransactionContext(),
  );
  return id;
}

interface OutboxRow {
  id: string;
  subject: string;
  schema_id: string;
  payload: string;
}

/**
 * Publishes a service's outbox in order. Rows are leased in batches (FOR UPDATE
 * SKIP LOCKED) so two instances never send the same batch at once, published
 * outside any transaction, then marked sent together; from a failed send on,
 * the batch is left for the next pass, and JetStream drops a resend by its
 * Nats-Msg-Id.
 */
export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private readonly table: string;

  constructor(
    private readonly orm: MikroORM,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly intervalMs = 500,
  ) {
    this.table = qualified(orm.em, "outbox");
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.intervalMs);
    this.wake();
  }

  /** Asks for a pass now (after a commit that wrote events). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const batch = await this.lease().catch((error: unknown) => {
        this.logger.warn({ err: error }, "outbox relay could not lease events; the next pass tries again");
        return [];
      });
      if (batch.length === 0) return;
      // Published back to back on one connection, so the stream keeps their order; acknowledged together.
      const outcomes = await Promise.allSettled(batch.map((row) => this.publish(row)));
      const failed = outcomes.findIndex((outcome) => outcome.status === "rejected");
      const sent = failed === -1 ? batch : batch.slice(0, failed);
      const unsent = batch.slice(sent.length);
      const connection = this.orm.em.getConnection();
      try {
        if (sent.length > 0) await connection.execute(`update ${this.table} set sent_at = now(), lease_until = null where id in (?)`, [sent.map((row) => row.id)], "run");
        // From the first failure on, everything is sent again (in order) by the next pass, on any
        // instance; what the stream already has is dropped there by its Nats-Msg-Id.
        if (unsent.length > 0) await connection.execute(`update ${this.table} set lease_until = null where id in (?)`, [unsent.map((row) => row.id)], "run");
      } catch (error) {
        this.logger.warn({ err: error }, "outbox relay could not record what it sent; the leases lapse and it is sent again");
        return;
      }
      if (failed !== -1) {
        this.logger.warn({ err: (outcomes[failed] as PromiseRejectedResult).reason }, "outbox relay pass stopped; unsent events stay for the next pass");
        return;
      }
    }
  }

  private publish(row: OutboxRow): Promise<void> {
    return this.bus.publish(row.subject, row.id, Buffer.from(row.payload), {
      "Nats-Msg-Id": row.id,
      "Pf-Schema": row.schema_id,
      "Content-Type": "application/json",
    });
  }

  private async lease(): Promise<OutboxRow[]> {
    return this.orm.em.getConnection().execute<OutboxRow[]>(
      `update ${this.table} set lease_until = now() + interval '30 seconds'
       where id in (select id from ${this.table}
                    where sent_at is null and (lease_until is null or lease_until < now())
                    order by id limit 100 for update skip locked)
       returning id, subject, schema_id, payload`,
      [],
      "all",
    ).then((rows) => rows.sort((a, b) => (a.id < b.id ? -1 : 1)));
  }
}
