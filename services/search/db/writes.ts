import { newId } from "../../kit/handler/ids.js";
import type { ValidWrite } from "../domain/documents.js";
import type { HeldDocument, RefusedWrite, RejectionRow, WriteAnswer } from "../engine/engine.js";
import { isDeadlock, type Tables } from "./sql.js";

/**
 * The writes of one owner as one statement: every row is inserted, or
 * replaces the held row only over an older revision (at equal revision, a
 * tombstone replaces a document). The guard is in the statement, so
 * concurrent writers need no lock of ours: PostgreSQL re-checks it against the
 * row's newest version. Rows are taken in one order by every writer.
 */
function upsert(documents: string): string {
  const title = `public.unaccent(w.title)`;
  const body = `public.unaccent(w.body)`;
  const vector = `setweight(to_tsvector(w.config::regconfig, ${title}), 'A')
      || setweight(to_tsvector(w.config::regconfig, ${body}), 'B')
      || case when w.config = 'simple' then ''::tsvector
         else setweight(to_tsvector('simple', ${title}), 'A') || setweight(to_tsvector('simple', ${body}), 'B') end`;
  return `insert into ${documents} as d (owner, type, id, revision, deleted, title, title_folded, body, url, lang,
      access, public, published, facets, facet_pairs, published_at, indexed_at, tsv)
    select $1, w.type, w.id, w.revision, w.deleted, w.title, lower(${title}), w.body, w.url, w.lang,
      w.access, w.public, w.published, w.facets, w.facet_pairs,
      date_trunc('milliseconds', coalesce(w.published_at, $3)), $3, ${vector}
    from jsonb_to_recordset($2::jsonb) as w(type text, id text, revision bigint, deleted boolean, title text,
      body text, url text, lang text, config text, access text[], public boolean, published boolean, facets jsonb,
      facet_pairs text[], published_at timestamptz)
    order by w.type, w.id
    on conflict (owner, type, id) do update set revision = excluded.revision, deleted = excluded.deleted,
      title = excluded.title, title_folded = excluded.title_folded, body = excluded.body, url = excluded.url,
      lang = excluded.lang, access = excluded.access, public = excluded.public, published = excluded.published,
      facets = excluded.facets, facet_pairs = excluded.facet_pairs, published_at = excluded.published_at,
      indexed_at = excluded.indexed_at, tsv = excluded.tsv, written_by = default
    where d.revision < excluded.revision or (d.revision = excluded.revision and excluded.deleted and not d.deleted)
    returning d.type, d.id`;
}

/** A write as the statement's JSON row: a tombstone holds no content. */
function rowOf(write: ValidWrite) {
  const content = write.content;
  return {
    type: write.type,
    id: write.id,
    revision: write.revision.toString(),
    deleted: write.deleted,
    title: content?.title ?? "",
    body: content?.body ?? "",
    url: content?.url ?? "",
    lang: content?.lang ?? "",
    config: content?.config ?? "simple",
    access: content?.access ?? [],
    public: content?.public ?? false,
    published: content?.published ?? false,
    facets: content?.facets ?? {},
    facet_pairs: content?.facetPairs ?? [],
    published_at: content?.publishedAt?.toISOString() ?? null,
  };
}

const keyOf = (type: string, id: string) => `${type}\u0000${id}`;

/** Applies the writes; answers each, and records the stale ones as rejections. */
export async function applyWrites(
  tables: Tables,
  owner: string,
  writes: readonly ValidWrite[],
  at: Date,
): Promise<WriteAnswer[]> {
  if (writes.length === 0) return [];
  const json = JSON.stringify(writes.map(rowOf));
  const statement = upsert(tables.documents);
  const applied = await tables
    .run<{ type: string; id: string }>(statement, [owner, json, at])
    .catch((error: unknown) => {
      if (isDeadlock(error)) return tables.run<{ type: string; id: string }>(statement, [owner, json, at]);
      throw error;
    });
  const done = new Set(applied.map((row) => keyOf(row.type, row.id)));
  const others = writes.filter((write) => !done.has(keyOf(write.type, write.id)));
  const held = new Map((await heldRevisions(tables, owner, others)).map((row) => [keyOf(row.type, row.id), row]));
  const stale: RefusedWrite[] = [];
  const answers = writes.map((write): WriteAnswer => {
    if (done.has(keyOf(write.type, write.id))) return { outcome: "applied", current: write.revision };
    const now = held.get(keyOf(write.type, write.id));
    const current = now ? BigInt(now.revision) : 0n;
    // The same write again (a relay's retry) finds itself held: applied, so retries end.
    if (now && current === write.revision && now.deleted === write.deleted) return { outcome: "applied", current };
    stale.push({
      type: write.type,
      id: write.id,
      revision: write.revision,
      deletion: write.deleted,
      code: "search.revision_stale",
      detail: `search holds revision ${current}${now?.deleted ? " (a tombstone)" : ""} of this document.`,
    });
    return { outcome: "stale", current };
  });
  await recordRejections(tables, owner, stale, at);
  return answers;
}

function heldRevisions(tables: Tables, owner: string, writes: readonly ValidWrite[]) {
  if (writes.length === 0) return Promise.resolve([]);
  return tables.run<{ type: string; id: string; revision: string; deleted: boolean }>(
    `select d.type, d.id, d.revision, d.deleted from ${tables.documents} d
     join unnest($2::text[], $3::text[]) as k(type, id) on d.type = k.type and d.id = k.id where d.owner = $1`,
    [owner, writes.map((write) => write.type), writes.map((write) => write.id)],
  );
}

/** Keeps refused writes for their owner to read. */
export async function recordRejections(
  tables: Tables,
  owner: string,
  refused: readonly RefusedWrite[],
  at: Date,
): Promise<void> {
  if (refused.length === 0) return;
  await tables.run(
    `insert into ${tables.rejections} (rejection_id, owner, type, id, revision, deletion, code, detail, rejected_at)
     select r.rejection_id, $1, r.type, r.id, r.revision, r.deletion, r.code, r.detail, $3
     from jsonb_to_recordset($2::jsonb) as r(rejection_id text, type text, id text, revision bigint, deletion boolean,
       code text, detail text)`,
    [
      owner,
      JSON.stringify(
        refused.map((write) => ({
          rejection_id: newId("rej", at.getTime()),
          type: write.type.slice(0, 200),
          id: write.id.slice(0, 200),
          revision: write.revision.toString(),
          deletion: write.deletion,
          code: write.code,
          detail: write.detail.slice(0, 500),
        })),
      ),
      at,
    ],
  );
}

type HeldRow = {
  type: string;
  id: string;
  revision: string;
  deleted: boolean;
  indexed_at: string | Date;
};

const heldOf = (row: HeldRow): HeldDocument => ({
  type: row.type,
  id: row.id,
  revision: BigInt(row.revision),
  deleted: row.deleted,
  indexedAt: new Date(row.indexed_at),
});

/** One page of an owner's documents by type then id. */
export async function inventory(
  tables: Tables,
  owner: string,
  page: { type?: string; after?: [string, string]; limit: number },
): Promise<HeldDocument[]> {
  const values: unknown[] = [owner, page.limit];
  const where = ["owner = $1"];
  if (page.type !== undefined) where.push(`type = $${values.push(page.type)}`);
  if (page.after) where.push(`(type, id) > ($${values.push(page.after[0])}, $${values.push(page.after[1])})`);
  const rows = await tables.run<HeldRow>(
    `select type, id, revision, deleted, indexed_at from ${tables.documents}
     where ${where.join(" and ")} order by type, id limit $2`,
    values,
  );
  return rows.map(heldOf);
}

/** One of an owner's documents as held, content included. */
export async function held(tables: Tables, owner: string, type: string, id: string): Promise<HeldDocument | undefined> {
  const [row] = await tables.run<
    HeldRow & {
      title: string;
      body: string;
      url: string;
      lang: string;
      access: string[];
      public: boolean;
      published: boolean;
      facets: Record<string, string[]>;
      facet_pairs: string[];
      published_at: string | Date;
    }
  >(
    `select type, id, revision, deleted, indexed_at, title, body, url, lang, access, public, published, facets,
       facet_pairs, published_at
     from ${tables.documents} where owner = $1 and type = $2 and id = $3`,
    [owner, type, id],
  );
  if (!row) return undefined;
  if (row.deleted) return heldOf(row);
  const { title, body, url, lang, access, published, facets, published_at: publishedAt } = row;
  return {
    ...heldOf(row),
    content: {
      title,
      body,
      url,
      lang,
      config: "",
      access,
      public: row.public,
      published,
      facets,
      facetPairs: row.facet_pairs,
      publishedAt: new Date(publishedAt),
    },
  };
}

/** One page of an owner's rejections, newest first (rejection ids sort by time). */
export async function rejections(
  tables: Tables,
  owner: string,
  page: { before?: string; limit: number },
): Promise<RejectionRow[]> {
  const rows = await tables.run<{
    rejection_id: string;
    type: string;
    id: string;
    revision: string;
    deletion: boolean;
    code: string;
    detail: string;
    rejected_at: string | Date;
  }>(
    `select rejection_id, type, id, revision, deletion, code, detail, rejected_at from ${tables.rejections}
     where owner = $1 ${page.before ? "and rejection_id < $3" : ""} order by rejection_id desc limit $2`,
    page.before ? [owner, page.limit, page.before] : [owner, page.limit],
  );
  return rows.map((row) => ({
    rejectionId: row.rejection_id,
    type: row.type,
    id: row.id,
    revision: BigInt(row.revision),
    deletion: row.deletion,
    code: row.code,
    detail: row.detail,
    rejectedAt: new Date(row.rejected_at),
  }));
}
