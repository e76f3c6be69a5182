import { create, toJsonString, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { getOption } from "@bufbuild/protobuf";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type pg from "pg";
import { event_subjects as eventSubjects, schema as schemaOption } from "../../../gen/pf/v1/options_pb.js";
import { qualified } from "../db/orm.js";
import { sql } from "../db/sql.js";
import { outsideCall } from "../runtime/call.js";
import { commitsLater, signalAfterCommit, writeBeforeCommit } from "../db/commits.js";
import { newId } from "../handler/ids.js";
import { problem } from "../handler/problem.js";
import type { Logger } from "../runtime/logger.js";
import { activeTraceparent } from "../runtime/tracing.js";
import type { EventBus } from "./bus.js";
import { OutboxResends } from "./outbox-resends.js";
import type { OutboxWakes } from "./outbox-wake.js";
import { RelayConnection, RelayLease } from "./relay-database.js";

export { RELAY_LEASE_MS } from "./relay-database.js";

/** The largest event a change may publish. */
export const MAX_EVENT_BYTES = 512 * 1024;

/** Failed sends wait 1 s, 2 s, 4 s … up to this before the next try. */
const MAX_BACKOFF_MS = 60_000;
/** Counted failures (the bus reachable) after which an event is set aside. */
const MAX_ATTEMPTS = 10;

/**
 * Writes an event into the service's outbox in the caller's transaction, so
 * the event exists exactly when the change it reports does. The relay sends it.
 * In a transaction of `inTransaction` the row is written as it commits, with
 * the transaction's other events in one statement.
 * `at` is the change's time (the caller's clock): it fills the event's
 * `occurred_at` when its schema has one and the event leaves it unset.
 */
export async function recordEvent<Desc extends DescMessage>(
  em: EntityManager,
  subject: string,
  desc: Desc,
  event: MessageInitShape<Desc>,
  at?: Date,
): Promise<string> {
  const [id] = await recordEvents(em, subject, desc, [event], at);
  return id;
}

/** Writes several events of one subject with one statement (a change that notifies many), in order. */
export async function recordEvents<Desc extends DescMessage>(
  em: EntityManager,
  subject: string,
  desc: Desc,
  events: MessageInitShape<Desc>[],
  at?: Date,
): Promise<string[]> {
  if (events.length === 0) return [];
  // The subjects the message declares are those the AsyncAPI document lists: another is the caller's mistake.
  if (!getOption(desc, eventSubjects).includes(subject))
    throw new Error(`${desc.typeName} does not declare ${subject} in its (pf.v1.event_subjects)`);
  const schemaId = getOption(desc, schemaOption) || desc.typeName;
  // The span writing the change: the event's consumers continue its trace.
  const traceparent = activeTraceparent() ?? null;
  const rows = events.map((init) => {
    const event = occurred(desc, init, at);
    const payload = toJsonString(desc, event, { useProtoFieldName: true, alwaysEmitImplicit: true });
    // NATS refuses messages past its max_payload (1 MiB by default): refuse the change instead of an event that cannot leave.
    if (Buffer.byteLength(payload) > MAX_EVENT_BYTES) {
      throw problem(413, "event.too_large", `The change would publish an event over ${MAX_EVENT_BYTES} bytes.`);
    }
    return [newId("evt"), subject, schemaId, payload, traceparent];
  });
  if (commitsLater(em)) {
    // The transaction's events go in one statement as it commits, however many changes recorded them.
    const waiting = leftForCommit.get(em);
    if (waiting) waiting.push(...rows);
    else {
      leftForCommit.set(em, rows);
      writeBeforeCommit(em, () => insertRows(em, leftForCommit.get(em)!));
    }
  } else await insertRows(em, rows);
  signalAfterCommit(em, "events");
  return rows.map(([id]) => id as string);
}

/** An outbox row as written: id, subject, schema id, payload, traceparent. */
type Row = (string | null)[];

/** The outbox rows of a transaction, written as it commits, in the order recorded. */
const leftForCommit = new WeakMap<EntityManager, Row[]>();

/** The events `em`'s transaction wrote as it committed (`inTransaction`'s), for the relay to send as they are. */
export function eventsCommittedBy(em: EntityManager): readonly Row[] {
  return leftForCommit.get(em) ?? [];
}

/** Rows written by one statement at most (a fan-out's thousands go in several). */
const ROWS_AT_ONCE = 1_000;

async function insertRows(em: EntityManager, rows: Row[]): Promise<void> {
  for (let from = 0; from < rows.length; from += ROWS_AT_ONCE) {
    const some = rows.slice(from, from + ROWS_AT_ONCE);
    await sql(
      em,
      `insert into {outbox} (id, subject, schema_id, payload, traceparent) values ${some.map(() => "(?, ?, ?, ?, ?)").join(", ")}`,
      some.flat(),
    );
  }
}

/**
 * The event, its `occurred_at` (a Timestamp, where the schema has one) set to `at` when unset. A schema with one and
 * no time, or a time and no such field, is the caller's mistake: it fails the change rather than publish a wrong time.
 */
function occurred<Desc extends DescMessage>(desc: Desc, init: MessageInitShape<Desc>, at: Date | undefined) {
  const event = create(desc, init);
  const field = desc.fields.find(
    (f) => f.name === "occurred_at" && f.fieldKind === "message" && f.message.typeName === "google.protobuf.Timestamp",
  );
  if (!field) {
    if (at) throw new Error(`${desc.typeName} has no occurred_at for the time given`);
    return event;
  }
  if ((event as Record<string, unknown>)[field.localName] !== undefined) return event;
  if (!at) throw new Error(`${desc.typeName} needs the change's time for its occurred_at`);
  return create(desc, { ...event, [field.localName]: timestampFromDate(at) } as MessageInitShape<Desc>);
}

interface OutboxRow {
  id: string;
  subject: string;
  schema_id: string;
  payload: string;
  traceparent: string | null;
  attempts: number;
  waiting: boolean;
  aged: boolean;
}

const BATCH = 500;

/** An event handed over by its commit: never tried, never waiting, just written. */
const FRESH = { attempts: 0, waiting: false, aged: false } as const;

/** How long events sent as handed over wait to be marked sent, so that those of many commits take one statement. */
const MARK_DELAY_MS = 200;

/** Ids a read pass remembers sending, so that a copy handed over after the read began is not sent again. */
const SENT_BY_READ_KEPT = 4 * BATCH;

/** How a relay is woken besides its own process's commits. */
export interface RelayOptions {
  /** The fallback poll (PF_OUTBOX_POLL_MS): it also takes over the lease of a crashed holder. */
  intervalMs?: number;
  /**
   * Other processes' commits, over LISTEN/NOTIFY (absent on the embedded
   * database: one process).
   */
  wakes?: OutboxWakes;
  /** The process's relay connections on a database server (`openRelayPool`); absent, the service's pool. */
  pool?: pg.Pool;
}

/** A batch on its way to the bus: its acknowledgements, in the batch's order. */
interface Publishing {
  batch: OutboxRow[];
  outcomes: Promise<PromiseSettledResult<void>[]>;
}

/**
 * Publishes a service's outbox in order. One instance at a time relays (it
 * holds the service's relay lease), so events leave in the order written even
 * with many instances. A batch is published back to back outside any
 * transaction, and the next one is read and published behind it while its
 * acknowledgements are on their way; batches are marked sent up to the first
 * failure. That event holds the ones after it until it is tried again alone
 * (see `failed`), and JetStream drops a resend of what was published behind
 * it by its Nats-Msg-Id; past its window, the stream is asked first
 * (`OutboxResends`). A pass runs when this process commits events
 * (`committed`), when another process does (`wakes`), and on the poll.
 */
export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private readonly table: string;
  private readonly schema: string;
  private readonly intervalMs: number;
  private readonly wakes?: OutboxWakes;
  /** Where the relay's statements run. */
  private readonly db: RelayConnection;
  /** One relay per service at a time: this instance relays while it holds it. */
  private readonly lease: RelayLease;
  /** When this instance last published an event. */
  private lastRelayedAt?: number;
  /** Which events the stream already holds, when a resend may be past its duplicate window. */
  private readonly resends: OutboxResends;
  /**
   * Whether every event committed before this instance's last read of the outbox has left, and it has held the
   * lease since: the events its own process commits next leave as handed over (`committed`), without a read.
   */
  private caughtUp = false;
  /** A wake asked for a read of the outbox (another process's commit, the poll, a commit whose events were not handed). */
  private readWanted = true;
  /** Events this process committed while caught up, handed over to leave as they are. */
  private handed: OutboxRow[] = [];
  /** Events sent and not yet marked: marked together within MARK_DELAY_MS, or by the next read. */
  private unmarked: string[] = [];
  private markTimer?: NodeJS.Timeout;
  /** The unmarked events' time is up: the next pass marks them. */
  private markDue = false;
  /** The events the current read pass sent: a handed copy of one of them is not sent again. */
  private readonly sentByRead = new Set<string>();

  constructor(
    orm: MikroORM,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly prefix: string,
    options: RelayOptions = {},
  ) {
    this.table = qualified(orm.em, "outbox");
    this.db = new RelayConnection(orm, options.pool);
    this.resends = new OutboxResends(bus, prefix);
    this.lease = new RelayLease(this.db.statement, qualified(orm.em, "leases"), () => {
      // The holder before may have left work half done, and events were committed that were not handed here.
      this.caughtUp = false;
      this.resends.doubt();
    });
    this.schema = String(orm.em.config.get("schema"));
    this.intervalMs = options.intervalMs ?? 500;
    this.wakes = options.wakes;
  }

  start(): void {
    this.wakes?.on(this.schema, () => this.wake());
    this.timer = setInterval(() => this.wake(), this.intervalMs);
    this.lease.start();
    this.wake();
  }

  /**
   * After a commit of this process that wrote events (`events`, those of a transaction of `inTransaction`): a
   * pass here, which sends them as handed over while the relay is caught up (no read of the outbox), else reads.
   * Not holding the lease, it tells the instance that does at once, not after finding out by a statement.
   */
  committed(events: readonly Row[] = []): void {
    if (!this.lease.held()) this.wakes?.notify(this.schema);
    if (events.length > 0 && this.caughtUp && this.lease.held()) {
      for (const [id, subject, schema_id, payload, traceparent] of events)
        this.handed.push({
          id: id!,
          subject: subject!,
          schema_id: schema_id!,
          payload: payload!,
          traceparent,
          ...FRESH,
        });
      this.run();
    } else this.wake();
  }

  /** Asks for a pass that reads the outbox. */
  wake(): void {
    this.readWanted = true;
    this.run();
  }

  /**
   * Runs a pass now. Passes run outside any caller's call, one at a time:
   * wakes during a pass make one more pass after it, unless its last read of
   * the outbox began after them, or it failed (the database or the bus just
   * did: the poll tries again).
   */
  private run(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = outsideCall(() => this.pass()).then((passed) => {
      this.running = undefined;
      const more = this.again && passed;
      this.again = false;
      if (more) this.run();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.markTimer);
    await this.running;
    await this.markUnmarked().catch(() => undefined);
    await this.lease.stop();
  }

  /** One pass; false when it failed. */
  private async pass(): Promise<boolean> {
    try {
      if (!(await this.lease.take())) {
        // Another instance relays now: it hears of what was handed here.
        if (this.handed.length > 0) this.wakes?.notify(this.schema);
        this.caughtUp = false;
        this.handed = [];
        return true;
      }
      if (this.readWanted || !this.caughtUp) await this.relay();
      else await this.relayHanded();
      const idle = this.lastRelayedAt === undefined || Date.now() - this.lastRelayedAt >= LEASE_IDLE_MS;
      if (this.markDue || idle || this.unmarked.length >= BATCH) await this.markUnmarked();
      this.markDue = false;
      // The lease is kept while events keep coming (no statements spent on it per pass) and let go once idle.
      if (!idle) return true;
      this.caughtUp = false;
      await this.lease.release();
      return true;
    } catch (error) {
      // Published events may be left unmarked.
      this.caughtUp = false;
      this.resends.doubt();
      this.logger.warn({ err: error }, "outbox relay pass stopped; the next pass goes on");
      return false;
    }
  }

  /**
   * Sends the events handed over since the last pass back to back, in the order committed; they are marked sent
   * within MARK_DELAY_MS, together. A failure is recorded as a read pass's is, and the relay reads again: the failed
   * event holds the ones after it until its next try.
   */
  private async relayHanded(): Promise<void> {
    // At most a read's batch at once, as a read pass publishes: the rest goes in the next pass.
    const batch = this.handed.splice(0, BATCH).filter((row) => !this.sentByRead.has(row.id));
    if (this.handed.length > 0) this.again = true;
    if (batch.length === 0) return;
    const sent = await this.settle(this.publishBatch(batch), this.unmarked);
    if (!sent) this.caughtUp = false;
    this.markTimer ??= setTimeout(() => {
      this.markTimer = undefined;
      this.markDue = true;
      this.run();
    }, MARK_DELAY_MS);
  }

  /**
   * Publishes batches in order until none is left. While a batch's
   * acknowledgements are on their way, the next is read (marking the ones
   * before it sent in the same statement) and published behind it, when a
   * wake since the last read or a full batch says there is more: rows
   * committed meanwhile leave without waiting for those acknowledgements.
   */
  private async relay(): Promise<void> {
    // Events sent as handed over and not yet marked are marked by the first read (kept until it has).
    const sent: string[] = [...this.unmarked];
    let pending: Publishing | undefined;
    let ok = true;
    this.caughtUp = false;
    this.sentByRead.clear();
    while (ok) {
      const rows = await this.next(sent.splice(0), pending?.batch ?? []);
      this.unmarked = [];
      const ready = rows.length > 0 && !rows[0].waiting && !this.stopped && (await this.lease.take());
      // An event tried before goes alone, and settles before anything is read after it: nothing after it reaches the stream first.
      const batch = ready ? (rows[0].attempts > 0 ? rows.slice(0, 1) : rows) : [];
      for (const row of batch) if (this.sentByRead.size < SENT_BY_READ_KEPT) this.sentByRead.add(row.id);
      // Already in the stream (a resend past its duplicate window would be kept twice): marked, not published again.
      const inStream = await this.resends.inStream(batch);
      const publishing =
        batch.length > inStream.size ? this.publishBatch(batch.filter((row) => !inStream.has(row.id))) : undefined;
      sent.push(...inStream);
      if (pending) ok = await this.settle(pending, sent);
      pending = publishing;
      if (ok && pending && ((!this.again && rows.length < BATCH) || pending.batch[0].attempts > 0)) {
        ok = await this.settle(pending, sent);
        pending = undefined;
      }
      if (!pending && sent.length === 0) {
        // All committed before this read has left: the process's next events can leave as handed over.
        this.caughtUp = rows.length === 0;
        return;
      }
    }
    // A failure: what was published behind it is not marked (sent again after it, JetStream drops the resend).
    this.resends.doubt();
    await pending?.outcomes;
    if (sent.length > 0) await this.markSent(sent);
  }

  private publishBatch(batch: OutboxRow[]): Publishing {
    return { batch, outcomes: Promise.allSettled(batch.map((row) => this.publish(row))) };
  }

  /** Awaits a batch's acknowledgements and adds its rows up to the first failure to `sent`; false after a failure (recorded). */
  private async settle({ batch, outcomes }: Publishing, sent: string[]): Promise<boolean> {
    const settled = await outcomes;
    const failed = settled.findIndex((outcome) => outcome.status === "rejected");
    const acknowledged = failed === -1 ? batch : batch.slice(0, failed);
    sent.push(...acknowledged.map((row) => row.id));
    if (acknowledged.length > 0) this.lastRelayedAt = Date.now();
    if (failed === -1) return true;
    await this.failed(batch[failed], (settled[failed] as PromiseRejectedResult).reason);
    return false;
  }

  /**
   * Marks `sent` and reads the next batch, leaving out `publishing` (on its
   * way), in one statement. Wakes before it asked for nothing more: the rows
   * committed before them are in its answer.
   */
  private next(sent: string[], publishing: OutboxRow[]): Promise<OutboxRow[]> {
    this.again = false;
    this.readWanted = false;
    // Handed over before this read began: committed before it, so in its answer.
    this.handed = [];
    // The select sees the outbox as before the update beside it: what was just sent is left out by id.
    return this.db.statement<OutboxRow>(
      `${sent.length > 0 ? `with sent as (update ${this.table} set sent_at = now() where id = any($1::text[])) ` : ""}
       select id, subject, schema_id, payload, traceparent, attempts, coalesce(retry_at > now(), false) as waiting,
              coalesce(created_at < now() - $3::int * interval '1 millisecond', false) as aged
       from ${this.table} where sent_at is null and failed_at is null and id <> all($1::text[] || $2::text[])
       order by id limit ${BATCH}`,
      [sent, publishing.map((row) => row.id), this.resends.agedAfterMs()],
    );
  }

  /** Marks the events sent as handed over; a failed mark keeps them for the next (a read would send them again). */
  private async markUnmarked(): Promise<void> {
    if (this.unmarked.length === 0) return;
    const marking = this.unmarked.splice(0);
    try {
      await this.markSent(marking);
    } catch (error) {
      this.unmarked.unshift(...marking);
      throw error;
    }
  }

  private async markSent(sent: string[]): Promise<void> {
    await this.db.statement(`update ${this.table} set sent_at = now() where id = any($1::text[])`, [sent]);
  }

  /**
   * A send that failed holds the events after it until its next try, after a
   * growing pause (what already reached the stream is dropped when sent again
   * within JetStream's duplicate window, and found by asking it past the
   * window: `OutboxResends`). Failures while the
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
    const [state] = await this.db.statement<{ attempts: number; failed: boolean }>(
      `update ${this.table}
       set attempts = attempts + $1::int, last_error = $2,
           retry_at = now() + least(power(2, attempts) * 1000, $3::int) * interval '1 millisecond',
           failed_at = case when $4::boolean or attempts + $1 >= $5::int then now() end
       where id = $6 returning attempts, failed_at is not null as failed`,
      [counted, message.slice(0, 500), MAX_BACKOFF_MS, permanent, MAX_ATTEMPTS, row.id],
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
      ...(row.traceparent && { traceparent: row.traceparent }),
    });
  }
}

/** How long an idle relay keeps the lease before letting another instance take it. */
const LEASE_IDLE_MS = 1_000;
