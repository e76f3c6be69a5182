import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { DocumentRow } from "./entities.js";

/** A sources item as a document of one instrument. */
export interface DocumentDraft {
  instrumentId: string;
  itemId: string;
  sourceKey: string;
  canonicalUrl: string;
  title: string;
  filingType: string;
  publishedAt: Date | null;
  revision: number;
  receivedAt: Date;
}

/**
 * Stores an item as a document of an instrument, or brings the stored one up
 * to a newer revision (an older one arriving late changes nothing). Answers
 * the document as stored: one per (instrument, item), whatever its revisions;
 * none for an item removed upstream (its removal may arrive before it: the
 * consumers of created, revised and removed run apart).
 */
export async function upsertDocument(em: EntityManager, draft: DocumentDraft): Promise<DocumentRow | null> {
  await sql(
    em,
    `insert into {documents} as d (id, instrument_id, item_id, source_key, canonical_url, title,
       filing_type, published_at, revision, received_at)
     select ?, ?, ?, ?, ?, ?, ?, ?::timestamptz, ?::int, ?::timestamptz
     where not exists (select 1 from {removed_items} where item_id = ?)
     on conflict (instrument_id, item_id) do update set canonical_url = excluded.canonical_url,
       title = excluded.title, filing_type = excluded.filing_type, published_at = excluded.published_at,
       revision = excluded.revision, received_at = excluded.received_at
     where d.revision < excluded.revision and d.removed_at is null`,
    [
      newId("doc"),
      draft.instrumentId,
      draft.itemId,
      draft.sourceKey,
      draft.canonicalUrl,
      draft.title,
      draft.filingType,
      draft.publishedAt,
      draft.revision,
      draft.receivedAt,
      draft.itemId,
    ],
  );
  return em.findOne(
    DocumentRow,
    { instrumentId: draft.instrumentId, itemId: draft.itemId, removedAt: null },
    { refresh: true },
  );
}

/** sources.item.removed: the item's documents leave the context input, and the item stays removed here too. */
export async function removeItemDocuments(em: EntityManager, itemId: string, reason: string, at: Date): Promise<void> {
  await sql(
    em,
    `insert into {removed_items} (item_id, reason, removed_at) values (?, ?, ?)
     on conflict (item_id) do nothing`,
    [itemId, reason, at],
  );
  await sql(em, `update {documents} set removed_reason = ?, removed_at = ? where item_id = ? and removed_at is null`, [
    reason,
    at,
    itemId,
  ]);
}
