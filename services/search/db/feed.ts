import type { IndexedRow } from "../memory/store.js";
import type { Tables } from "./sql.js";

/**
 * What a look had not seen: transactions from `next` on, and those `running` when it began (its snapshot's xmax and
 * xip): every other transaction's rows were visible to it, so the next look reads only these, however old the
 * oldest running transaction is.
 */
export interface FeedMark {
  next: bigint;
  running: bigint[];
}

/** Where a reading of changes resumes within a look: the transaction that wrote a row, then the row's key. */
export interface FeedKey {
  writtenBy: bigint;
  owner: string;
  type: string;
  id: string;
}

type Row = Omit<IndexedRow, "publishedUs" | "titleFolded" | "facetPairs"> & {
  published_us: string;
  title_folded: string;
  facet_pairs: string[];
  written_by: string;
};

const COLUMNS = `owner, type, id, revision::text as revision, published and not deleted as live, public, access,
  facet_pairs, title_folded, (extract(epoch from published_at) * 1000000)::bigint::text as published_us,
  tsv::text as tsv, written_by::text as written_by`;

const indexedOf = (row: Row): IndexedRow & { writtenBy: bigint } => ({
  owner: row.owner,
  type: row.type,
  id: row.id,
  revision: row.revision,
  live: row.live,
  public: row.public,
  access: row.access,
  facetPairs: row.facet_pairs,
  titleFolded: row.title_folded,
  publishedUs: Number(row.published_us),
  tsv: row.tsv,
  writtenBy: BigInt(row.written_by),
});

/** The transactions a look begun now would not see. */
export async function feedMark(tables: Tables): Promise<FeedMark> {
  const [row] = await tables.run<{ next: string; running: string[] }>(
    `select pg_snapshot_xmax(s)::text as next, array(select pg_snapshot_xip(s)::text) as running
     from pg_current_snapshot() s`,
    [],
  );
  return { next: BigInt(row.next), running: row.running.map(BigInt) };
}

/** One page of the live documents by key, for the index's build. */
export async function livePage(tables: Tables, after: [string, string, string], limit: number) {
  const rows = await tables.run<Row>(
    `select ${COLUMNS} from ${tables.documents} where published and not deleted and (owner, type, id) > ($1, $2, $3)
     order by owner, type, id limit $4`,
    [...after, limit],
  );
  return rows.map(indexedOf);
}

/** One page of rows written by the transactions a mark had not seen (live or not: a deletion leaves the index). */
export async function changedPage(tables: Tables, mark: FeedMark, after: FeedKey, limit: number) {
  const rows = await tables.run<Row>(
    `select ${COLUMNS} from ${tables.documents}
     where (written_by >= $1::xid8 or written_by = any($2::xid8[])) and (written_by, owner, type, id) > ($3::xid8, $4, $5, $6)
     order by written_by, owner, type, id limit $7`,
    [
      mark.next.toString(),
      mark.running.map(String),
      after.writtenBy.toString(),
      after.owner,
      after.type,
      after.id,
      limit,
    ],
  );
  return rows.map(indexedOf);
}
