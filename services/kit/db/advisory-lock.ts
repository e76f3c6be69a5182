import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "./sql.js";

/**
 * A transaction-scoped advisory lock on a name: concurrent transactions taking
 * the same name run one after the other (freed at commit or rollback), so a
 * check-then-insert of a row that does not exist yet never races, where a row
 * lock has nothing to lock.
 */
export async function advisoryLock(em: EntityManager, name: string): Promise<void> {
  await sql(em, `select pg_advisory_xact_lock(hashtextextended(?, 0))`, [name]);
}
