import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

/**
 * Links a legacy id to a subject unless it is linked already (two links at
 * once: the primary key keeps the first); true when this call linked it.
 */
export async function insertLegacyId(
  em: EntityManager,
  link: { service: string; localId: string; subject: string },
  at: Date,
): Promise<boolean> {
  const inserted = await em.getConnection().execute(
    `insert into ${qualified(em, "legacy_ids")} (service, local_id, subject, created_at) values (?, ?, ?, ?)
     on conflict do nothing returning subject`,
    [link.service, link.localId, link.subject, at],
    "all",
    em.getTransactionContext(),
  );
  return inserted.length > 0;
}
