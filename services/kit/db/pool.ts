import pg from "pg";
import type { Logger } from "../runtime/logger.js";
import { waitingOutTooMany } from "./too-many-clients.js";

/** Idle connections the pool keeps open however quiet the process is (pg closes idle ones above it after 10 s). */
export const IDLE_FLOOR = 2;

export interface ProcessPoolOptions {
  url: string;
  /** Its connections at most (PF_DB_POOL). */
  size: number;
  /**
   * Its connections one service holds at once (PF_DB_SERVICE_CONNECTIONS; default: all of them). More transactions at
   * once than the server has cores only queue inside it, where every other statement (an outbox relay's read, another
   * service's call) waits behind them: measured, 20 writers of one service on a pool of 20 made the relay's events
   * five times slower than on 4, and wrote no more.
   */
  serviceShare?: number;
  /** How long a caller waits for a connection, a wait for the server to have one to spare included (PF_DB_ACQUIRE_TIMEOUT_MS). */
  acquireTimeoutMs: number;
  logger?: Logger;
}

/**
 * The process's one pool of database connections, shared by every service it runs (each qualifies its tables with
 * its schema, so no connection carries a service's state). A connection the server refuses for want of one to spare
 * (53300, too many clients) is asked for again with backoff, one log line per wait, until the caller's acquire
 * timeout; pg's own wait for a free connection is bounded by the same timeout.
 */
export class ProcessPool extends pg.Pool {
  /** When the pool last handed out or took back a connection. */
  lastProgress = Date.now();
  /** Callers waiting for the server to have a connection to spare (besides pg's own queue for a free one). */
  private waitingOut = 0;

  constructor(readonly settings: ProcessPoolOptions) {
    super({
      connectionString: settings.url,
      max: settings.size,
      min: Math.min(IDLE_FLOOR, settings.size),
      connectionTimeoutMillis: settings.acquireTimeoutMs,
    });
    // An idle connection the server closed is dropped by pg; unheard, the 'error' would end the process.
    this.on("error", (error) => settings.logger?.warn({ err: error }, "an idle database connection was lost"));
    this.watch();
  }

  /** The connections handed out and not given back. */
  private readonly checkedOut = new Set<pg.PoolClient>();

  /**
   * Ends the pool, last, once every service's ORM has closed. A connection still checked out then belongs to work its
   * ORM can no longer finish (a transaction begun as the process stopped, say a device link's end: its rollback never
   * runs on a closed ORM), so it is destroyed rather than waited for, which would hang the stop.
   */
  async close(): Promise<void> {
    const ended = this.end();
    for (const client of [...this.checkedOut]) client.release(true);
    await ended;
  }

  /** Callers waiting for a connection: pg's queue and those waiting for the server to have one to spare. */
  get waiting(): number {
    return this.waitingCount + this.waitingOut;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): void;
  override connect(
    callback?: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | void {
    this.waitingOut++;
    const connected = waitingOutTooMany(() => super.connect(), {
      boundMs: this.settings.acquireTimeoutMs,
      what: "a connection of the pool",
      logger: this.settings.logger,
    }).finally(() => this.waitingOut--);
    // pg's `query` asks for its connection with a callback.
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | undefined)),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }

  /**
   * A connection the server closed while checked out goes back to the pool
   * (which discards it) at once. Kysely gives a transaction's connection back
   * only once its COMMIT or ROLLBACK succeeds, which never happens on a
   * terminated connection: without this, every terminated backend would hold
   * a pool slot for good. The holder's own later release becomes a no-op.
   */
  private watch(): void {
    const checkedOut = this.checkedOut;
    this.on("connect", (client) => {
      // Its holder's query fails on its own; unheard, the 'error' of a checked-out connection would end the process.
      client.on("error", (error) => this.settings.logger?.warn({ err: error }, "a database connection was lost"));
      client.once("end", () => {
        if (!checkedOut.has(client)) return;
        const release = client.release.bind(client);
        client.release = () => undefined;
        release(new Error("the database closed the connection"));
      });
    });
    this.on("acquire", (client) => {
      checkedOut.add(client);
      this.lastProgress = Date.now();
    });
    this.on("release", (_error, client) => {
      checkedOut.delete(client);
      this.lastProgress = Date.now();
    });
  }
}
