import type { MikroORM } from "@mikro-orm/postgresql";
import pg from "pg";
import { randomUUID } from "node:crypto";
import type { Logger } from "../runtime/logger.js";

/**
 * How long the service's relay lease lasts unrenewed: a crashed holder's
 * lapses within this, and another instance relays. Short, so events do not
 * stall after a crash; the holder renews it every RELAY_LEASE_RENEW_MS, on a
 * timer of its own, so a slow publish (up to 5 s) does not lose it.
 */
export const RELAY_LEASE_MS = 5_000;
const RELAY_LEASE_RENEW_MS = 1_500;
/** An instance refused the lease asks again no sooner than this, however often it is woken. */
const LEASE_RETRY_MS = 250;
const RELAY_LEASE = "kit.outbox-relay";

/** Runs one of the relay's statements (numbered parameters) and answers its rows. */
export type RelayStatement = <Row>(sql: string, params: unknown[]) => Promise<Row[]>;

/** How a relay's own connection shows in pg_stat_activity. */
export const RELAY_APPLICATION_NAME = "pf-outbox-relay";

/** Connections the relays of one process share on a database server (the connection budget counts them). */
export const RELAY_CONNECTIONS = 2;

/**
 * The relays' connections of a process on a database server, apart from the
 * process's pool: on it their reads waited behind the services' transactions
 * for a connection (measured: most of the latency with 20 writers on a pool
 * of 4). Shared by every relay of the process (a pass's statements are short),
 * so a whole platform holds two, not one per service. The host ends it after
 * the relays stop.
 */
export function openRelayPool(url: string, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: RELAY_CONNECTIONS,
    application_name: RELAY_APPLICATION_NAME,
    keepAlive: true,
  });
  // An idle connection the server closed: dropped by the pool, the next statement opens another.
  pool.on("error", (error) => logger.warn({ err: error }, "outbox relay connection lost; it is opened again"));
  return pool;
}

/** Where a relay's statements run: the process's relay pool, or (the embedded database, one session) the service's. */
export class RelayConnection {
  private pool?: Promise<pg.Pool>;

  constructor(
    private readonly orm: MikroORM,
    relayPool: pg.Pool | undefined,
  ) {
    if (relayPool) this.pool = Promise.resolve(relayPool);
  }

  readonly statement: RelayStatement = async <Row>(sql: string, params: unknown[]) => {
    this.pool ??= this.orm.em.getConnection().getNativeClient();
    return (await (await this.pool).query(sql, params)).rows as Row[];
  };
}

/** The service's relay lease (a row of its `leases` table): one instance relays at a time. */
export class RelayLease {
  private readonly holder = randomUUID();
  private renewal?: NodeJS.Timeout;
  private renewing?: Promise<boolean>;
  /** When this instance last took or renewed the lease; undefined while it does not hold it. */
  private renewedAt?: number;
  /** When another instance last held the lease against this one. */
  private refusedAt?: number;

  constructor(
    private readonly statement: RelayStatement,
    private readonly leases: string,
    /** Called when this instance takes the lease it did not hold: the holder before it may have left work half done. */
    private readonly onTaken: () => void = () => undefined,
  ) {}

  /** Renews the lease while held, even while a pass is busy publishing; a pass also renews it between batches. */
  start(): void {
    this.renewal = setInterval(() => {
      if (this.renewedAt !== undefined) this.renewing = this.take().catch(() => false);
    }, RELAY_LEASE_RENEW_MS);
  }

  /** Whether this instance took the lease and has not let it go (no statement). */
  held(): boolean {
    return this.renewedAt !== undefined;
  }

  /**
   * Whether this instance holds the lease, renewing it every
   * RELAY_LEASE_RENEW_MS. Refused, it asks again after LEASE_RETRY_MS at the
   * soonest: the holder relays what woke it.
   */
  async take(): Promise<boolean> {
    const now = Date.now();
    if (this.renewedAt !== undefined && now - this.renewedAt < RELAY_LEASE_RENEW_MS) return true;
    if (this.refusedAt !== undefined && now - this.refusedAt < LEASE_RETRY_MS) return false;
    const taken = await this.statement(
      `insert into ${this.leases} (name, holder, until) values ($1, $2, now() + $3::int * interval '1 millisecond')
       on conflict (name) do update set holder = excluded.holder, until = excluded.until
       where ${this.leases}.until < now() or ${this.leases}.holder = excluded.holder
       returning holder`,
      [RELAY_LEASE, this.holder, RELAY_LEASE_MS],
    );
    if (taken.length > 0 && this.renewedAt === undefined) this.onTaken();
    this.renewedAt = taken.length > 0 ? Date.now() : undefined;
    this.refusedAt = taken.length > 0 ? undefined : Date.now();
    return taken.length > 0;
  }

  async release(): Promise<void> {
    this.renewedAt = undefined;
    await this.statement(`update ${this.leases} set until = now() where name = $1 and holder = $2`, [
      RELAY_LEASE,
      this.holder,
    ]);
  }

  /** Stops renewing, then lets the lease go: a renewal landing after the release would hold it for a stopped instance. */
  async stop(): Promise<void> {
    clearInterval(this.renewal);
    await this.renewing;
    if (this.renewedAt !== undefined) await this.release().catch(() => undefined);
  }
}
