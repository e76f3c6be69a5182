import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { LegacyId } from "./entities.js";

/**
 * Links a legacy id to a subject unless it is linked already (two links at
 * once: the primary key keeps the first); true when this call linked it.
 */
export async function insertLegacyId(
  em: EntityManager,
  link: { service: string; localId: string; subject: string },
  at: Date,
): Promise<boolean> {
  const inserted = await sql(
    em,
    `insert into {legacy_ids} (service, local_id, subject, created_at) values (?, ?, ?, ?)
     on conflict do nothing returning subject`,
    [link.service, link.localId, link.subject, at],
  );
  return inserted.length > 0;
}

/** The link of a legacy id, or null; `fresh` reads it again past the transaction's identity map (a concurrent link). */
export function legacyIdOf(em: EntityManager, service: string, localId: string, fresh = false) {
  return em.findOne(LegacyId, { service, localId }, fresh ? { refresh: true } : {});
}

const links = new HotRead<{ service: string; localId: string; subject: string }, [string[], string[]]>(
  "legacy_ids.by_local_id",
  `select l.service, l.local_id as "localId", l.subject from {legacy_ids} l
   join unnest($1::text[], $2::text[]) as q(service, local_id) on l.service = q.service and l.local_id = q.local_id`,
);

/** The subjects legacy ids are linked to, keyed by `linkKey`. */
export async function linkedSubjects(
  ctx: ReadContext,
  ids: { service: string; localId: string }[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await links.run(
    ctx,
    ids.map((id) => id.service),
    ids.map((id) => id.localId),
  );
  return new Map(rows.map((row) => [linkKey(row), row.subject]));
}

export function linkKey(id: { service: string; localId: string }): string {
  return `${id.service}\u0000${id.localId}`;
}
