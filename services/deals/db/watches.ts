import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

/** How often a watch notified, and when last. */
export type Notified = { count: bigint; last?: Date };

/** Counted from the watches' matches: a popular watch has no hot counter row. */
export async function notifiedOf(em: EntityManager, ids: string[]): Promise<Map<string, Notified>> {
  if (ids.length === 0) return new Map();
  const rows = await em.getConnection().execute<{ watch_id: string; n: string; last: Date }[]>(
    `select watch_id, count(*) as n, max(matched_at) as last from ${qualified(em, "watch_matches")}
     where watch_id in (?) group by watch_id`,
    [ids],
    "all",
    em.getTransactionContext(),
  );
  return new Map(rows.map((row) => [row.watch_id, { count: BigInt(row.n), last: new Date(row.last) }]));
}
