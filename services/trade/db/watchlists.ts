import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { type Watchlist, WatchlistItemSchema, WatchlistSchema } from "../../../gen/pf/trade/v1/watchlists_pb.js";
import { sql } from "../../kit/db/sql.js";
import { InstrumentRow, WatchlistItemRow, WatchlistRow } from "./entities.js";

/** A person's watchlist, or null when it is missing or another person's (both answer 404). */
export async function ownWatchlist(em: EntityManager, id: string, owner: string): Promise<WatchlistRow | null> {
  const row = await em.findOne(WatchlistRow, { id });
  return row && row.owner === owner ? row : null;
}

/** How many watchlists a person keeps. */
export const watchlistCount = (em: EntityManager, owner: string) => em.count(WatchlistRow, { owner });

/** Writes a new watchlist. */
export async function insertWatchlist(
  em: EntityManager,
  watchlist: RequiredEntityData<WatchlistRow>,
): Promise<WatchlistRow> {
  const row = em.create(WatchlistRow, watchlist);
  await em.flush();
  return row;
}

/** Writes changes to a watchlist (its name, when its items last changed) in the caller's transaction. */
export async function changeWatchlist(
  em: EntityManager,
  row: WatchlistRow,
  changes: Partial<WatchlistRow> = {},
): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** Up to `rows` of a person's watchlists, newest first, before the cursor's id. */
export function watchlistsOf(em: EntityManager, owner: string, before: string | undefined, rows: number) {
  return em.find(WatchlistRow, before === undefined ? { owner } : { owner, id: { $lt: before } }, {
    orderBy: { id: "desc" },
    limit: rows,
  });
}

/** Adds an instrument once: a second add changes nothing. Answers whether it was added. */
export async function addItem(em: EntityManager, watchlistId: string, instrumentId: string, at: Date) {
  const added = await sql<{ watchlist_id: string }>(
    em,
    `insert into {watchlist_items} (watchlist_id, instrument_id, added_at) values (?, ?, ?)
       on conflict do nothing returning watchlist_id`,
    [watchlistId, instrumentId, at],
  );
  return added.length === 1;
}

/** Removes an instrument if present; answers whether it was there. */
export async function removeItem(em: EntityManager, watchlistId: string, instrumentId: string) {
  return (await em.nativeDelete(WatchlistItemRow, { watchlistId, instrumentId })) > 0;
}

/** Deletes a watchlist with its items. */
export async function deleteWatchlist(em: EntityManager, watchlistId: string) {
  await em.nativeDelete(WatchlistItemRow, { watchlistId });
  await em.nativeDelete(WatchlistRow, { id: watchlistId });
}

/** Whether an instrument is on a watchlist. */
export async function hasItem(em: EntityManager, watchlistId: string, instrumentId: string) {
  return (await em.count(WatchlistItemRow, { watchlistId, instrumentId })) > 0;
}

/** How many instruments a watchlist holds. */
export function itemCount(em: EntityManager, watchlistId: string) {
  return em.count(WatchlistItemRow, { watchlistId });
}

/** Watchlists as answered, with their instruments in the order added. */
export async function watchlistAnswers(em: EntityManager, rows: WatchlistRow[]): Promise<Watchlist[]> {
  if (rows.length === 0) return [];
  const items = await em.find(
    WatchlistItemRow,
    { watchlistId: { $in: rows.map((row) => row.id) } },
    { orderBy: { addedAt: "asc", instrumentId: "asc" } },
  );
  const instruments = await em.find(InstrumentRow, {
    id: { $in: [...new Set(items.map((item) => item.instrumentId))] },
  });
  const byId = new Map(instruments.map((row) => [row.id, row]));
  return rows.map((row) =>
    create(WatchlistSchema, {
      id: row.id,
      owner: row.owner,
      name: row.name,
      items: items
        .filter((item) => item.watchlistId === row.id)
        .map((item) =>
          create(WatchlistItemSchema, {
            instrumentId: item.instrumentId,
            symbol: byId.get(item.instrumentId)?.symbol ?? "",
            name: byId.get(item.instrumentId)?.name ?? "",
            addedAt: timestampFromDate(item.addedAt),
          }),
        ),
      createdAt: timestampFromDate(row.createdAt),
      updatedAt: timestampFromDate(row.updatedAt),
    }),
  );
}
