import pg from "pg";
import { until } from "./until.js";

/**
 * Holds one coin account's row from another session, so a call that needs it
 * waits inside its transaction until `release()`.
 */
export async function holdCoinAccount(
  databaseUrl: string,
  appId: string,
  subject: string,
): Promise<{ release(): Promise<void>; queued(): Promise<void>; blocking(): Promise<boolean> }> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query("begin");
  await holder.query("select 1 from network.coin_accounts where app_id = $1 and subject = $2 for update", [
    appId,
    subject,
  ]);
  return {
    queued: () => untilBlockedBy(holder),
    blocking: () => blocking(holder),
    async release() {
      await holder.query("commit");
      await holder.end();
    },
  };
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
