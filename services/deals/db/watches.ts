import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { newId } from "../../kit/handler/ids.js";
import { WatchRow } from "./entities.js";

/** How many watches and saved searches a person keeps. */
export function watchCount(em: EntityManager, owner: string): Promise<number> {
  return em.count(WatchRow, { owner });
}

/** Writes a new watch (or saved search) under a new id. */
export async function insertWatch(
  em: EntityManager,
  watch: Omit<RequiredEntityData<WatchRow>, "id">,
): Promise<WatchRow> {
  const row = em.create(WatchRow, { ...watch, id: newId("wch") });
  await em.flush();
  return row;
}

/** The watch with this id, anyone's; null when there is none. */
export function watchById(em: EntityManager, id: string): Promise<WatchRow | null> {
  return em.findOne(WatchRow, { id });
}

/** Deletes a watch; its past matches stay. */
export async function deleteWatch(em: EntityManager, row: WatchRow): Promise<void> {
  em.remove(row);
  await em.flush();
}

/** How often a watch notified, and when last. */
export type Notified = { count: bigint; last?: Date };

type NotifiedRow = { watch_id: string; n: string; last: string | Date };

const toNotified = (rows: readonly NotifiedRow[]) =>
  new Map(rows.map((row) => [row.watch_id, { count: BigInt(row.n), last: new Date(row.last) }]));

/** Counted from the watches' matches: a popular watch has no hot counter row. */
export async function notifiedOf(em: EntityManager, ids: string[]): Promise<Map<string, Notified>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<NotifiedRow>(
    em,
    `select watch_id, count(*) as n, max(matched_at) as last from {watch_matches}
     where watch_id in (?) group by watch_id`,
    [ids],
  );
  return toNotified(rows);
}

/** A watch as its answer shows it: the entity, or a hot read's row. */
export type StoredWatch = Pick<
  WatchRow,
  "id" | "owner" | "kind" | "keyword" | "productId" | "priceBelowMinor" | "priceBelowCurrency" | "query" | "createdAt"
>;

type WatchText = Omit<StoredWatch, "priceBelowMinor" | "createdAt"> & {
  priceBelowMinor: string | null;
  createdAt: string;
};

const watchesOfOwner = new HotRead<WatchText, [string, string | null, number]>(
  "watches.by_owner",
  `select id, owner, kind, keyword, product_id as "productId", price_below_minor as "priceBelowMinor",
     price_below_currency as "priceBelowCurrency", query, created_at as "createdAt"
   from {watches} where owner = $1 and ($2::text is null or id < $2) order by id desc limit $3`,
);

const matchesOfWatches = new HotRead<NotifiedRow, [string[]]>(
  "watch_matches.by_watch",
  `select watch_id, count(*) as n, max(matched_at) as last from {watch_matches}
   where watch_id = any($1) group by watch_id`,
);

/** Up to `rows` of an owner's watches, newest first, before the cursor's id: a hot read outside any transaction. */
export async function readWatches(
  ctx: ReadContext,
  owner: string,
  before: string | undefined,
  rows: number,
): Promise<StoredWatch[]> {
  const found = await watchesOfOwner.run(ctx, owner, before ?? null, rows);
  return found.map((row) => ({
    ...row,
    priceBelowMinor: row.priceBelowMinor == null ? null : BigInt(row.priceBelowMinor),
    createdAt: new Date(row.createdAt),
  }));
}

/** `notifiedOf` as a hot read, outside any transaction. */
export async function readNotified(ctx: ReadContext, ids: string[]): Promise<Map<string, Notified>> {
  return ids.length === 0 ? new Map() : toNotified(await matchesOfWatches.run(ctx, ids));
}
