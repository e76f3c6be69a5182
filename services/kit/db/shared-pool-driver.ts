import { PostgreSqlConnection, PostgreSqlDriver, type Configuration } from "@mikro-orm/postgresql";
import {
  CompiledQuery,
  PostgresDialect,
  PostgresDriver,
  type DatabaseConnection,
  type PostgresDialectConfig,
  type TransactionSettings,
} from "kysely";
import pg from "pg";
import { currentCall } from "../runtime/call.js";
import type { ProcessPool } from "./pool.js";

/**
 * What a service's ORM is given as `driverOptions` (a function, so MikroORM keeps the pool by reference): the pool,
 * and whether the ORM owns it (one opened for it alone, closed with it).
 */
export type SharedPoolOptions = () => { processPool: ProcessPool; owned: boolean };

/**
 * A service's ORM on the process's one pool. MikroORM's PostgreSQL connection always opens a `pg` pool of its own;
 * this one hands Kysely (which runs MikroORM's queries) the process's pool instead, and answers it as the native
 * client (`HotRead`, `statement`, the pool's readings). Closing a service's ORM leaves the pool open: the process
 * closes it once, after every service.
 */
class SharedPoolConnection extends PostgreSqlConnection {
  override createKyselyDialect(): PostgresDialect {
    const { processPool: pool, owned } = this.shared();
    // Once this ORM is closed it takes no connection, as its own pool ended would not: work still under way as the
    // process stops (a device link's end) could never give one back through a closed ORM.
    let closed = false;
    const share = new ServiceShare(pool.settings.serviceShare ?? pool.settings.size, pool.settings.acquireTimeoutMs);
    const connect = async () => {
      if (closed) throw new Error("the service's database connection is closed");
      await share.take();
      const client = await pool.connect().catch((error: unknown) => {
        share.give();
        throw error;
      });
      // pg sets a checked-out connection's release afresh at each checkout: the turn goes back with it, once.
      const release = client.release;
      client.release = (error?: Error | boolean) => {
        client.release = release;
        share.give();
        release.call(client, error);
      };
      if (!closed) return client;
      client.release();
      throw new Error("the service's database connection is closed");
    };
    return new DeadlineBoundDialect({
      pool: {
        connect,
        end: () => {
          closed = true;
          return owned ? pool.end() : Promise.resolve();
        },
        options: pool.options,
      },
      controlClient: pg.Client,
      // No pg-cursor: nothing streams rows (`em.stream`).
    });
  }

  override async getNativeClient(): Promise<ProcessPool> {
    await this.ensureConnection();
    return this.shared().processPool;
  }

  private shared(): ReturnType<SharedPoolOptions> {
    return (this.config.get("driverOptions") as SharedPoolOptions)();
  }
}

/**
 * A service's turns at the process's pool: at most `limit` connections at once, the rest waiting first come, first
 * served, as long as a caller waits for a free connection (then the same error as pg's, answered 503).
 */
export class ServiceShare {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly limit: number,
    private readonly timeoutMs: number,
  ) {}

  take(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(turn), 1);
        reject(new Error("timeout exceeded when trying to connect: the service's share of the pool stayed in use"));
      }, this.timeoutMs);
      this.waiting.push(turn);
    });
  }

  /** A turn given back passes to the first waiting, else frees a place. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held--;
  }
}

/**
 * The milliseconds left to the call being served, at least 1; undefined outside a call. A transaction begun in a
 * call binds its statements to them (`statement_timeout`): a wait on a lock ends at the deadline (57014, answered
 * 504) and frees the connection, instead of holding it for a caller that has gone. `inTransaction` refuses to begin
 * once no time is left.
 */
function callTimeLeftMs(): number | undefined {
  const call = currentCall();
  return call ? Math.max(1, Math.ceil(call.deadline - Date.now())) : undefined;
}

/** Kysely's PostgreSQL dialect, its transactions bound to the call's deadline as they begin (`callTimeLeftMs`). */
class DeadlineBoundDialect extends PostgresDialect {
  constructor(private readonly settings: PostgresDialectConfig) {
    super(settings);
  }

  override createDriver(): PostgresDriver {
    return new DeadlineBoundDriver(this.settings);
  }
}

class DeadlineBoundDriver extends PostgresDriver {
  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const timeLeft = callTimeLeftMs();
    if (timeLeft === undefined) return super.beginTransaction(connection, settings);
    const bound = `set local statement_timeout = ${timeLeft}`;
    // One round trip for both (a simple query may hold several statements): a call's transaction begins on the path
    // of its answer. A transaction with settings of its own (none of inTransaction's) is bound after Kysely begins it.
    if (settings.isolationLevel || settings.accessMode) {
      await super.beginTransaction(connection, settings);
      await connection.executeQuery(CompiledQuery.raw(bound));
    } else await connection.executeQuery(CompiledQuery.raw(`begin; ${bound}`));
  }
}

/** MikroORM's PostgreSQL driver on SharedPoolConnection. */
export class SharedPoolDriver extends PostgreSqlDriver {
  constructor(config: Configuration) {
    super(config);
    // PostgreSqlDriver names its connection class itself; the one it made is never connected.
    Object.assign(this, { connection: new SharedPoolConnection(config) });
  }
}
