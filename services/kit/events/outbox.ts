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
 * Publishes a service's outbox in order. Rows are leased (FOR UPDATE SKIP LOCKED)
 * so two instances never send the same batch at once, sent outside any
 * transaction, then marked sent; a send that fails leaves the rest for the next
 * pass, and JetStream drops a resend by its Nats-Msg-Id.
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
    let unsent: string[] = [];
    try {
      for (;;) {
        const batch = await this.lease();
        if (batch.length === 0) return;
        unsent = batch.map((row) => row.id);
        for (const row of batch) {
          await this.bus.publish(row.subject, row.id, Buffer.from(row.payload), {
            "Nats-Msg-Id": row.id,
            "Pf-Schema": row.schema_id,
            "Content-Type": "application/json",
          });
          await this.orm.em.getConnection().execute(`update ${this.table} set sent_at = now(), lease_until = null where id = ?`, [row.id], "run");
          unsent = unsent.slice(1);
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, "outbox relay pass stopped; unsent events stay for the next pass");
      // Give the lease back so the next pass (on any instance) resends at once.
      if (unsent.length > 0) {
        await this.orm.em.getConnection()
          .execute(`update ${this.table} set lease_until = null where id in (?) and sent_at is null`, [unsent], "run")
          .catch(() => undefined);
      }
    }
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
