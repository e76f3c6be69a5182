import pg from "pg";
import { until } from "./until.js";

/** Rows another session holds: a call that needs them waits inside its transaction until `release()`. */
export interface HeldRows {
  release(): Promise<void>;
  /** Resolves once a call waits on the rows. */
  queued(): Promise<void>;
  /** Whether a call waits on the rows now. */
  blocking(): Promise<boolean>;
  /**
   * How many of the database's sessions wait on a lock now: a second call needing the rows queues behind the first,
   * not the holder, so waits are counted rather than who blocks them.
   */
  waiting(): Promise<number>;
}

/** Holds the rows a `select … for update` locks, from a session of its own. */
export async function holdRows(databaseUrl: string, lockingQuery: string, params: unknown[]): Promise<HeldRows> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query("begin");
  await holder.query(lockingQuery, params);
  return {
    queued: () => untilBlockedBy(holder),
    blocking: () => blocking(holder),
    async waiting() {
      const { rows } = await holder.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
      );
      return rows[0].n;
    },
    async release() {
      await holder.query("commit");
      await holder.end();
    },
  };
}

/** Holds one coin account's row. */
export function holdCoinAccount(databaseUrl: string, appId: string, subject: string): Promise<HeldRows> {
  return holdRows(databaseUrl, "select 1 from network.coin_accounts where app_id = $1 and subject = $2 for update", [
    appId,
    subject,
  ]);
}

/** Whether another session waits on a lock this one holds now. */
export async function blocking(holder: pg.Client): Promise<boolean> {
  // From pg_locks, which is live: pg_stat_activity would be a snapshot kept for the holder's transaction.
  const { rows } = await holder.query<{ n: number }>(
    "select count(*)::int as n from pg_locks where not granted and pg_backend_pid() = any(pg_blocking_pids(pid))",
  );
  return rows[0].n > 0;
}

/** Resolves once another session waits on a lock this session holds (the call under test has reached it). */
export async function untilBlockedBy(holder: pg.Client, timeoutMs?: number): Promise<void> {
  await until(() => blocking(holder), timeoutMs);
}
