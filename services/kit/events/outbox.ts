import { toJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { getOption } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { schema as schemaOption } from "../../../gen/pf/v1/options_pb.js";
import { qualified } from "../db/orm.js";
import { outsideCall } from "../rpc/call.js";
import { newId } from "../handler/ids.js";
import { problem } from "../handler/problem.js";
import type { Logger } from "../runtime/logger.js";
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
  const [id] = await recordEvents(em, subject, desc, [event]);
  return id;
}

/** Writes several events of one subject with one statement (a change that notifies many), in order. */
export async function recordEvents<Desc extends DescMessage>(
  em: EntityManager,
  subject: string,
  desc: Desc,
  events: MessageShape<Desc>[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const schemaId = getOption(desc, schemaOption) || desc.typeName;
  const rows = events.map((event) => {
    const payload = toJsonString(desc, event, { useProtoFieldName: true, alwaysEmitImplicit: true });
    // NATS refuses messages past its max_payload (1 MiB by default): refuse the change instead of an event that cannot leave.
    if (Buffer.byteLength(payload) > MAX_EVENT_BYTES) {
      throw problem(413, "event.too_large", `The change would publish an event over ${MAX_EVENT_BYTES} bytes.`);
    }
    return [newId("evt"), subject, schemaId, payload];
  });
  await em
    .getConnection()
    .execute(
      `insert into ${qualified(em, "outbox")} (id, subject, schema_id, payload) values ${rows.map(() => "(?, ?, ?, ?)").join(", ")}`,
      rows.flat(),
      "run",
      em.getTransactionContext(),
    );
  return rows.map(([id]) => id);
}

interface OutboxRow {
  id: string;
  subject: string;
  schema_id: string;
  payload: string;
  attempts: number;
  waiting: boolean;
}

/**
 * How long the service's relay lease lasts unrenewed: a crashed holder's
 * lapses within this, and another instance relays. Short, so events do not
 * stall after a crash; the holder renews it every RELAY_LEASE_RENEW_MS, on a
 * timer of its own, so a slow publish (up to 5 s) does not lose it.
 */
export const RELAY_LEASE_MS = 5_000;
const RELAY_LEASE_RENEW_MS = 1_500;
const BATCH = 500;

/**
 * Publishes a service's outbox in order. One instance at a time relays (it
 * holds the service's relay lease), so events leave in the order written even
 * with many instances. A batch is published back to back outside any
 * transaction and marked sent up to the first failure; that event holds the
 * ones after it until it is tried again alone (see `failed`), and JetStream
 * drops a resend by its Nats-Msg-Id.
 */
export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private renewal?: NodeJS.Timeout;
  private renewing?: Promise<boolean>;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private readonly table: string;
  private readonly leases: string;
  private readonly holder = randomUUID();
  /** When this instance last took or renewed the relay lease; undefined while it does not hold it. */
  private leaseRenewedAt?: number;
  /** When this instance last published an event. */
  private lastRelayedAt?: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly prefix: string,
    private readonly intervalMs = 500,
  ) {
    this.table = qualified(orm.em, "outbox");
    this.leases = qualified(orm.em, "leases");
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.intervalMs);
    // Renewed even while a pass is busy publishing; a pass also renews it between batches.
    this.renewal = setInterval(() => {
      if (this.leaseRenewedAt !== undefined) this.renewing = this.leaseHeld().catch(() => false);
    }, RELAY_LEASE_RENEW_MS);
    this.wake();
  }

  /** Asks for a pass now (after a commit that wrote events). Passes run outside any caller's call. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = outsideCall(() => this.pass()).finally(() => {
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
    clearInterval(this.renewal);
    // A renewal landing after the release would hold the lease for a stopped instance.
    await Promise.all([this.running, this.renewing]);
    if (this.leaseRenewedAt !== undefined) await this.releaseLease().catch(() => undefined);
  }

  private async pass(): Promise<void> {
    try {
      if (!(await this.leaseHeld())) return;
      while (!this.stopped && (await this.relayBatch())) {
        if (!(await this.leaseHeld())) return;
      }
      // The lease is kept while events keep coming (no statements spent on it per pass) and let go once idle.
      if (this.lastRelayedAt !== undefined && Date.now() - this.lastRelayedAt < LEASE_IDLE_MS) return;
      await this.releaseLease();
    } catch (error) {
      this.logger.warn({ err: error }, "outbox relay pass stopped; the next pass goes on");
    }
  }

  /** Whether this instance holds the service's relay lease, renewing it every RELAY_LEASE_RENEW_MS. */
  private async leaseHeld(): Promise<boolean> {
    if (this.leaseRenewedAt !== undefined && Date.now() - this.leaseRenewedAt < RELAY_LEASE_RENEW_MS) return true;
    const taken = await this.orm.em.getConnection().execute(
      `insert into ${this.leases} (name, holder, until) values (?, ?, now() + ? * interval '1 millisecond')
       on conflict (name) do update set holder = excluded.holder, until = excluded.until
       where ${this.leases}.until < now() or ${this.leases}.holder = excluded.holder
       returning holder`,
      [RELAY_LEASE, this.holder, RELAY_LEASE_MS],
    );
    this.leaseRenewedAt = taken.length > 0 ? Date.now() : undefined;
    return taken.length > 0;
  }

  private async releaseLease(): Promise<void> {
    this.leaseRenewedAt = undefined;
    await this.orm.em
      .getConnection()
      .execute(
        `update ${this.leases} set until = now() where name = ? and holder = ?`,
        [RELAY_LEASE, this.holder],
        "run",
      );
  }

  /** Publishes the next batch in order; true when it all went and more may wait. */
  private async relayBatch(): Promise<boolean> {
    const connection = this.orm.em.getConnection();
    const rows = await connection.execute<OutboxRow[]>(
      `select id, subject, schema_id, payload, attempts, coalesce(retry_at > now(), false) as waiting
       from ${this.table} where sent_at is null and failed_at is null order by id limit ${BATCH}`,
    );
    if (rows.length === 0 || rows[0].waiting) return false;
    // An event tried before goes alone, so nothing after it reaches the stream first.
    const batch = rows[0].attempts > 0 ? rows.slice(0, 1) : rows;
    const outcomes = await Promise.allSettled(batch.map((row) => this.publish(row)));
    const failed = outcomes.findIndex((outcome) => outcome.status === "rejected");
    const sent = (failed === -1 ? batch : batch.slice(0, failed)).map((row) => row.id);
    if (sent.length > 0) {
      await connection.execute(`update ${this.table} set sent_at = now() where id in (?)`, [sent], "run");
      this.lastRelayedAt = Date.now();
    }
    if (failed === -1) return batch.length === BATCH || batch.length < rows.length;
    await this.failed(batch[failed], (outcomes[failed] as PromiseRejectedResult).reason);
    return false;
  }

  /**
   * A send that failed holds the events after it until its next try, after a
   * growing pause (under JetStream's two-minute duplicate window, so what
   * already reached the stream is dropped when sent again). Failures while the
   * bus is unreachable, or its stream is missing (made again), do not count;
   * one the bus can never take (over its size limit), or MAX_ATTEMPTS counted
   * ones, set it aside as failed: logged, kept, and no longer holding the rest.
   */
  private async failed(row: OutboxRow, reason: unknown): Promise<void> {
    const message = reason instanceof Error ? reason.message : String(reason);
    const streamMissing = /stream not found|no stream|jetstream is not enabled|no responders/i.test(message);
    if (streamMissing) await this.bus.ensureStream(this.prefix).catch(() => undefined);
    const counted = this.bus.connected() && !streamMissing ? 1 : 0;
    const permanent = /max_payload|maximum payload|invalid subject/i.test(message);
    const [state] = await this.orm.em.getConnection().execute<{ attempts: number; failed: boolean }[]>(
      `update ${this.table}
       set attempts = attempts + ?, last_error = ?,
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
}

const RELAY_LEASE = "kit.outbox-relay";
/** How long an idle relay keeps the lease before letting another instance take it. */
const LEASE_IDLE_MS = 1_000;
