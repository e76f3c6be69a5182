import pg from "pg";
import type { Logger } from "../runtime/logger.js";
import { START_WAIT_MS, waitingOutTooMany } from "./too-many-clients.js";

/**
 * Runs `migrate` under a session-level advisory lock named after the service,
 * held on a connection of its own (outside the pool, which the migrations use):
 * instances starting at once on one database migrate one after the other, and
 * the later ones find nothing to do, where concurrent CREATEs would collide.
 */
export function withMigrationLock<T>(
  url: string,
  service: string,
  logger: Logger | undefined,
  migrate: () => Promise<T>,
): Promise<T> {
  return withMigrationLocks(url, [service], logger, migrate);
}

/**
 * `withMigrationLock` for several services at once, all their locks on the one
 * connection, so their migrations may run side by side. Taken in the order of
 * their names: two instances each wanting some of them never wait for each other in a circle.
 */
export async function withMigrationLocks<T>(
  url: string,
  services: readonly string[],
  logger: Logger | undefined,
  migrate: () => Promise<T>,
): Promise<T> {
  const client = await waitingOutTooMany(
    async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    },
    { boundMs: START_WAIT_MS, what: `${services.join(", ")}'s migration lock`, logger, atStart: true },
  );
  try {
    for (const service of [...services].sort())
      await client.query(`select pg_advisory_lock(hashtextextended($1, 0))`, [`pf.migrations:${service}`]);
    return await migrate();
  } finally {
    // Ending the session frees its locks, whether the migrations went through or not.
    await client.end();
  }
}
