import type { EntityManager } from "@mikro-orm/postgresql";
import { titleKey } from "../domain/clusters.js";
import { sql } from "../../kit/db/sql.js";

/** A source item as stored. */
export interface ItemRecord {
  id: string;
  source_key: string;
  canonical_url: string;
  title: string;
  title_key: string;
  published_at: Date | null;
  revision: number;
  change_order: string;
  dedupe: "unique" | "duplicate";
  duplicate_of: string | null;
  removed_at: Date | null;
  removed_reason: string | null;
  received_at: Date;
  cluster_id: string | null;
}

const ITEM = `select i.*, m.cluster_id from {source_items} i left join {cluster_members} m on m.item_id = i.id`;

/** Items by id, with their cluster. */
export async function itemsById(em: EntityManager, ids: string[]): Promise<Map<string, ItemRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<ItemRecord>(em, `${ITEM} where i.id in (?)`, [ids]);
  return new Map(rows.map((row) => [row.id, row]));
}

/** What an item change says. */
export interface ItemChange {
  id: string;
  sourceKey: string;
  canonicalUrl: string;
  title: string;
  publishedAt: Date | null;
  revision: number;
  changeOrder: bigint;
}

/**
 * Records a created or revised item; answers whether it is new. A removed item
 * stays removed (removal is sticky upstream), and an older revision arriving
 * late changes nothing.
 */
export async function upsertItem(
  em: EntityManager,
  change: ItemChange,
  at: Date,
): Promise<"new" | "updated" | "stale"> {
  const [row] = await sql<{ inserted: boolean }>(
    em,
    `insert into {source_items} (id, source_key, canonical_url, title, title_key, published_at, revision, change_order,
       dedupe, received_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'unique', ?, ?)
     on conflict (id) do update set canonical_url = excluded.canonical_url, title = excluded.title,
       title_key = excluded.title_key, published_at = excluded.published_at, revision = excluded.revision,
       change_order = excluded.change_order, updated_at = excluded.updated_at
     where {source_items}.revision < excluded.revision
     returning (xmax = 0) as inserted`,
    [
      change.id,
      change.sourceKey,
      change.canonicalUrl,
      change.title,
      titleKey(change.title),
      change.publishedAt,
      change.revision,
      change.changeOrder.toString(),
      at,
      at,
    ],
  );
  if (!row) return "stale";
  return row.inserted ? "new" : "updated";
}

/** Marks an item removed upstream (creating its row when news never saw it); answers whether this is news. */
export async function markRemoved(
  em: EntityManager,
  removal: { id: string; sourceKey: string; canonicalUrl: string; reason: string; changeOrder: bigint },
  at: Date,
): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `insert into {source_items} (id, source_key, canonical_url, title, title_key, revision, change_order, dedupe,
       removed_at, removed_reason, received_at, updated_at)
     values (?, ?, ?, '', '', 0, ?, 'unique', ?, ?, ?, ?)
     on conflict (id) do update set removed_at = excluded.removed_at, removed_reason = excluded.removed_reason,
       updated_at = excluded.updated_at
     where {source_items}.removed_at is null
     returning id`,
    [removal.id, removal.sourceKey, removal.canonicalUrl, removal.changeOrder.toString(), at, removal.reason, at, at],
  );
  return rows.length > 0;
}

/**
 * The first live member an item matches, oldest first: the same canonical URL
 * (then it is a duplicate), else the same normalised title.
 */
export async function matchOf(
  em: EntityManager,
  item: { id: string; canonicalUrl: string; titleKey: string },
): Promise<{ kind: "canonical_url" | "title_match"; member: string; clusterId: string } | undefined> {
  const [byUrl] = await sql<{ id: string; cluster_id: string }>(
    em,
    `${ITEM} where i.canonical_url = ? and i.id <> ? and m.cluster_id is not null order by i.received_at, i.id limit 1`,
    [item.canonicalUrl, item.id],
  );
  if (byUrl) return { kind: "canonical_url", member: byUrl.id, clusterId: byUrl.cluster_id };
  if (item.titleKey === "") return undefined;
  const [byTitle] = await sql<{ id: string; cluster_id: string }>(
    em,
    `${ITEM} where i.title_key = ? and i.id <> ? and i.removed_at is null and m.cluster_id is not null
     order by i.received_at, i.id limit 1`,
    [item.titleKey, item.id],
  );
  return byTitle ? { kind: "title_match", member: byTitle.id, clusterId: byTitle.cluster_id } : undefined;
}

/** Records an item as a duplicate of another. */
export async function markDuplicate(em: EntityManager, id: string, of: string): Promise<void> {
  await sql(em, `update {source_items} set dedupe = 'duplicate', duplicate_of = ? where id = ?`, [of, id]);
}

/** Counts of what news took in, per source. */
export interface IngestCount {
  source_key: string;
  items: string;
  duplicates: string;
  removed: string;
  last_received_at: Date;
  last_change_order: string;
}

const COUNTS = `count(*) as items, count(*) filter (where dedupe = 'duplicate') as duplicates,
  count(*) filter (where removed_at is not null) as removed`;

/** What news took in from the sources service, per source key: a page of keys after `after` (limit + 1 rows). */
export function ingestCounts(em: EntityManager, page: { after?: string; limit: number }): Promise<IngestCount[]> {
  return sql<IngestCount>(
    em,
    `select source_key, ${COUNTS}, max(updated_at) as last_received_at, max(change_order) as last_change_order
     from {source_items} where source_key > ? group by source_key order by source_key limit ?`,
    [page.after ?? "", page.limit + 1],
  );
}

/** What news took in from every source. */
export async function ingestTotals(em: EntityManager): Promise<Pick<IngestCount, "items" | "duplicates" | "removed">> {
  const [totals] = await sql<Pick<IngestCount, "items" | "duplicates" | "removed">>(
    em,
    `select ${COUNTS} from {source_items}`,
  );
  return totals;
}
