import { toJson } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type IndexDocument, IndexDocumentSchema } from "../../../gen/pf/search/v1/documents_pb.js";
import { signalAfterCommit } from "../db/commits.js";
import { sql } from "../db/sql.js";
import type { SearchDocumentSource } from "./document.js";

/** A document's desired state: its content, or null for its tombstone. */
export interface DocumentChange {
  type: string;
  id: string;
  document: IndexDocument | null;
}

/**
 * Records documents' desired states in the owner's transaction, so search gets a document exactly when the change
 * it shows commits. A change of content (or a tombstone of a live document) takes the next revision and waits for
 * the relay; the same content again changes nothing. A tombstone for a document never recorded is not written:
 * search cannot hold what was never sent (reconciliation tombstones what it holds anyway).
 */
export async function recordSearchDocuments(em: EntityManager, changes: DocumentChange[]): Promise<void> {
  // One state per document: the last given wins (an upsert may not touch a row twice).
  const latest = new Map(changes.map((change) => [`${change.type}\u0000${change.id}`, change]));
  // Stored as the message's JSON: what the relay reads back and sends.
  const live = [...latest.values()].flatMap(({ type, id, document }) =>
    document ? [{ type, id, document: toJson(IndexDocumentSchema, document) }] : [],
  );
  const gone = [...latest.values()].filter((change) => change.document === null);
  const run = (text: string, rows: unknown[]) => sql(em, text, [JSON.stringify(rows)]);
  if (live.length > 0) {
    await run(
      `insert into {search_documents} as d (type, id, revision, deleted, document)
       select c.type, c.id, 1, false, c.document from jsonb_to_recordset(?::jsonb) as c(type text, id text, document jsonb)
       on conflict (type, id) do update
       set revision = d.revision + 1, deleted = false, document = excluded.document, changed_at = now(),
           rejected = false, attempts = 0, last_error = null
       where d.deleted or d.document is distinct from excluded.document`,
      live,
    );
  }
  if (gone.length > 0) {
    await run(
      `update {search_documents} as d
       set revision = d.revision + 1, deleted = true, document = null, changed_at = now(),
           rejected = false, attempts = 0, last_error = null
       from jsonb_to_recordset(?::jsonb) as c(type text, id text)
       where d.type = c.type and d.id = c.id and not d.deleted`,
      gone.map(({ type, id }) => ({ type, id })),
    );
  }
  if (latest.size > 0) signalAfterCommit(em, "search-documents");
}

/**
 * Brings these documents of a source up to date in `em`'s transaction: what the owner's tables say now, recorded
 * (a tombstone for every id `describe` leaves out). What handlers call after a change, naming what it touched.
 */
export async function refreshSearchDocuments(
  em: EntityManager,
  source: SearchDocumentSource,
  ids: string[],
  at: Date,
): Promise<void> {
  if (ids.length === 0) return;
  const documents = await source.describe(em, ids, at);
  await recordSearchDocuments(
    em,
    ids.map((id) => ({ type: source.type, id, document: documents.get(id) ?? null })),
  );
}

/** A page of the ids of `type` the owner holds live in its table, after `after`, for the sweep. */
export async function recordedIds(em: EntityManager, type: string, after: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from {search_documents} where type = ? and id > ? and not deleted order by id limit ?`,
    [type, after, limit],
  );
  return rows.map((row) => row.id);
}
