import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../runtime/clock.js";
import type { HeldDocument, SearchDocumentSource, SearchIndex } from "./document.js";
import { recordedIds, refreshSearchDocuments } from "./record.js";
import type { Statement } from "./statements.js";

/** Ids per transaction of the sweep. */
const SWEEP_PAGE = 500;

/**
 * The sweep: every document of every source brought up to date from the owner's own tables, a page per short
 * transaction. It records what no write did: documents older than the wiring, content that time changed (an
 * expiry passing), and documents whose rows are gone (the ids recorded live are described again).
 */
export async function sweep(
  transaction: <T>(work: (em: EntityManager) => Promise<T>) => Promise<T>,
  sources: SearchDocumentSource[],
  clock: Clock,
): Promise<void> {
  for (const source of sources) {
    for (const pageOf of [
      source.ids.bind(source),
      (em: EntityManager, after: string, limit: number) => recordedIds(em, source.type, after, limit),
    ]) {
      let after = "";
      for (;;) {
        const ids = await transaction(async (em) => {
          const page = await pageOf(em, after, SWEEP_PAGE);
          await refreshSearchDocuments(em, source, page, clock.now());
          return page;
        });
        if (ids.length < SWEEP_PAGE) break;
        after = ids[ids.length - 1];
      }
    }
  }
}

/**
 * Compares the owner's documents with search's inventory, page by page, and repairs drift through the relay:
 * documents search lacks or holds at an older revision go again; where search holds a newer revision (or a
 * tombstone at the owner's revision of a live document), the owner's revision moves above it and the document goes
 * again; what search holds live that the owner has no row for is tombstoned at search's revision (at equal revision
 * a deletion wins). Documents pending, set aside as rejected, or changed since the comparison began are the relay's
 * business and left alone. Answers how many documents it sent back to the relay.
 */
export async function compareInventory(index: SearchIndex, db: { run: Statement; table: string }): Promise<number> {
  const t = db.table;
  const [{ started }] = await db.run<{ started: Date }>(`select now() as started`, []);
  const settled = (started: string) =>
    `not d.rejected and d.pushed_revision >= d.revision and d.changed_at < ${started}`;
  let repaired = 0;
  let cursor = "";
  do {
    const page = await index.inventory(cursor);
    const held: HeldDocument[] = page.documents;
    const [counts] = await db.run<{ moved: number; tombstoned: number }>(
      `with held as (
         select * from jsonb_to_recordset($1::jsonb) as h(type text, id text, revision bigint, deleted boolean)
       ),
       seen as (
         update ${t} as d
         set reconciled_at = $2,
             revision = case when h.revision > d.revision or (h.revision = d.revision and h.deleted and not d.deleted)
                             then h.revision + 1 else d.revision end,
             pushed_revision = case when h.revision < d.revision or (h.revision = d.revision and d.deleted and not h.deleted)
                                    then 0 else d.pushed_revision end
         from held h where d.type = h.type and d.id = h.id and ${settled("$2")}
         returning d.revision > d.pushed_revision as moved
       ),
       tombstoned as (
         insert into ${t} (type, id, revision, deleted, document)
         select h.type, h.id, h.revision, true, null from held h
         where not h.deleted and not exists (select 1 from ${t} d where d.type = h.type and d.id = h.id)
         on conflict (type, id) do nothing
         returning 1
       )
       select (select count(*) from seen where moved)::int as moved, (select count(*) from tombstoned)::int as tombstoned`,
      [JSON.stringify(held), started],
    );
    repaired += counts.moved + counts.tombstoned;
    cursor = page.nextCursor;
  } while (cursor !== "");
  // Live documents the whole inventory never named: search lacks them.
  const lacking = await db.run(
    `update ${t} as d set pushed_revision = 0
     where not d.deleted and ${settled("$1")} and (d.reconciled_at is null or d.reconciled_at < $1)
     returning 1`,
    [started],
  );
  return repaired + lacking.length;
}
