import pg from "pg";
import type { Logger } from "../runtime/logger.js";
import { START_WAIT_MS, waitingOutTooMany } from "./too-many-clients.js";

/**
 * Runs `migrate` under a session-level advisory lock named after the service,
 * held on a connection of its own (outside the pool, which the migrations use):
 * instances starting at once on one database migrate one after the other, and
 * the later ones find nothing to do, where concurrent CREATEs would collide.
 */
export async function withMigrationLock<T>(
  url: string,
  service: string,
  logger: Logger | undefined,
  migrate: () => Promise<T>,
): Promise<T> {
  const client = await waitingOutTooMany(
    async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    },
    { boundMs: START_WAIT_MS, what: `${service}'s migration lock`, logger, atStart: true },
  );
  try {
    await client.query(`select pg_advisory_lock(hashtextextended($1, 0))`, [`pf.migrations:${service}`]);
    return await migrate();
  } finally {
    // Ending the session frees its lock, whether the migrations went through or not.
    await client.end();
  }
}
