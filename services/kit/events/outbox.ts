import { toJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { getOption } from "@bufbuild/protobuf";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { schema as schemaOption } from "../../../gen/pf/v1/options_pb.js";
import { qualified } from "../db/orm.js";
import { newId } from "../ids.js";
import { problem } from "../problem.js";
import type { Logger } from "../logger.js";
import type { EventBus } from "./bus.js";

/** The largest event a change may publish. */
export const MAX_EVENT_BYTES = 512 * 1024;

/** Failed sends wait 1 s, 2 s, 4 s … up to this before the next try. */
const MAX_BACKOFF_MS = 60_000;
/** Counted failures (the bus reachable) after which an event is set aside. */
const MAX_ATTEMPTS = 10;

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
  const payload = toJsonString(desc, event, { useProtoFieldName: true, alwaysEmitImplicit: true });
  // NATS refuses messages past its max_payload (1 MiB by default): refuse the change instead of an event that cannot leave.
  if (Buffer.byteLength(payload) > MAX_EVENT_BYTES) {
    throw problem(413, "event.too_large", `The change would publish an event over ${MAX_EVENT_BYTES} bytes.`);
  }
  await em.getConnection().execute(
    `insert into ${qualified(em, "outbox")} (id, subject, schema_id, payload) values (?, ?, ?, ?)`,
    [id, subject, schemaId, payload],
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
 * back to back outside any transaction, and marked sent up to the first that
 * failed; that one holds the rest until it is tried again (see `failed`), and
 * JetStream drops a resend by its Nats-Msg-Id.
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
      const outcomes = await Promise.allSettled(batch.map((row) => this.publish(row)));
      const failed = outcomes.findIndex((outcome) => outcome.status === "rejected");
      const connection = this.orm.em.getConnection();
      try {
        const sent = (failed === -1 ? batch : batch.slice(0, failed)).map((row) => row.id);
        if (sent.length > 0) await connection.execute(`update ${this.table} set sent_at = now(), lease_until = null where id in (?)`, [sent], "run");
        if (failed === -1) continue;
        // The rest go again after the failed one, in order; JetStream drops those it already has.
        const rest = batch.slice(failed + 1).map((row) => row.id);
        if (rest.length > 0) await connection.execute(`update ${this.table} set lease_until = null where id in (?)`, [rest], "run");
        await this.failed(batch[failed], (outcomes[failed] as PromiseRejectedResult).reason);
      } catch (error) {
        this.logger.warn({ err: error }, "outbox relay could not record what it sent; the leases lapse and it is sent again");
      }
      return;
    }
  }

  /**
   * A send that failed holds the events after it until its next try, after a
   * growing pause. Failures while the bus is unreachable do not count; one the
   * bus can never take (over its size limit), or MAX_ATTEMPTS counted ones, set
   * it aside as failed — logged, kept, and no longer holding the rest.
   */
  private async failed(row: OutboxRow, reason: unknown): Promise<void> {
    const message = reason instanceof Error ? reason.message : String(reason);
    const counted = this.bus.connected() ? 1 : 0;
    const permanent = /max_payload|maximum payload|invalid subject/i.test(message);
    const [state] = await this.orm.em.getConnection().execute<{ attempts: number; failed: boolean }[]>(
      `update ${this.table}
       set attempts = attempts + ?, last_error = ?, lease_until = null,
           retry_at = now() + least(power(2, attempts) * 1000, ?) * interval '1 millisecond',
           failed_at = case when ? or attempts + ? >= ? then now() end
       where id = ? returning attempts, failed_at is not null as failed`,
      [counted, message.slice(0, 500), MAX_BACKOFF_MS, permanent, counted, MAX_ATTEMPTS, row.id],
      "all",
    );
    const log = { event: row.id, subject: row.subject, attempts: state?.attempts, err: reason };
    if (state?.failed) this.logger.error(log, "outbox event set aside as failed; the events after it go on");
    else this.logger.warn(log, "outbox event not published; it and the events after it are tried again after a pause");
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
                    where sent_at is null and failed_at is null and (lease_until is null or lease_until < now())
                      and id < coalesce((select min(id) from ${this.table}
                                         where sent_at is null and failed_at is null and retry_at > now()), '~')
                    order by id limit 100 for update skip locked)
       returning id, subject, schema_id, payload`,
      [],
      "all",
    ).then((rows) => rows.sort((a, b) => (a.id < b.id ? -1 : 1)));
  }
}
