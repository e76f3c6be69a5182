import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

/** Up-votes `from` gives, still counting, to offers `to` submitted, cast after `since` (vote-ring detection). */
export async function upvotesBetween(em: EntityManager, from: string, to: string, since: Date): Promise<number> {
  const [{ count }] = await em.getConnection().execute<{ count: string }[]>(
    `select count(*) as count from ${qualified(em, "votes")} v join ${qualified(em, "offers")} o on o.id = v.offer_id
     where v.voter = ? and o.submitted_by = ? and v.value = 1 and v.removed_at is null and v.created_at > ?`,
    [from, to, since],
    "all",
    em.getTransactionContext(),
  );
  return Number(count);
}
