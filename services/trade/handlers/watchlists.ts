import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { TradeService } from "../../../gen/pf/trade/v1/trade_pb.js";
import {
  DeletedResultSchema,
  WatchlistPageSchema,
  WatchlistResultSchema,
} from "../../../gen/pf/trade/v1/watchlists_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { TradeContext } from "../context.js";
import type { WatchlistRow } from "../db/entities.js";
import { instrumentBySymbol } from "../db/instruments.js";
import {
  addItem,
  changeWatchlist,
  deleteWatchlist,
  hasItem,
  insertWatchlist,
  itemCount,
  ownWatchlist,
  removeItem,
  watchlistAnswers,
  watchlistCount,
  watchlistsOf,
} from "../db/watchlists.js";
import { requireSymbol } from "../domain/symbols.js";

type WatchlistHandlers = Pick<
  ServiceImpl<typeof TradeService>,
  | "listWatchlists"
  | "createWatchlist"
  | "getWatchlist"
  | "renameWatchlist"
  | "deleteWatchlist"
  | "putWatchlistItem"
  | "deleteWatchlistItem"
>;

/** "Another person's watchlist answers 404": the same as a missing one, on every route. */
const notFound = () => problem(404, "watchlist.not_found", "There is no such watchlist.");

/** Watchlists: private to their person (X-PF-Subject or their own token); can be renamed. */
export function watchlistHandlers(ctx: TradeContext): WatchlistHandlers {
  const answer = async (em: EntityManager, row: WatchlistRow) =>
    create(WatchlistResultSchema, { result: { case: "watchlist", value: (await watchlistAnswers(em, [row]))[0] } });

  const own = async (em: EntityManager, id: string, owner: string) => {
    const row = await ownWatchlist(em, id, owner);
    if (!row) throw notFound();
    return row;
  };

  return {
    async listWatchlists(request, call) {
      const owner = actingPerson(call);
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const { items, nextCursor } = page(await watchlistsOf(em, owner, before, limit + 1), limit, (row) => [row.id]);
      const watchlists = await watchlistAnswers(em, items);
      return create(WatchlistResultSchema, {
        result: { case: "watchlists", value: create(WatchlistPageSchema, { watchlists, nextCursor }) },
      });
    },

    async createWatchlist(request, call) {
      const owner = actingPerson(call);
      const name = request.name.trim();
      const limit = ctx.settings.watchlistsPerPerson;
      return ctx.transaction(async (em) => {
        await requireBelowCap(
          em,
          {
            name: "trade.watchlists",
            owner,
            limit,
            code: "watchlist.limit",
            detail: `A person keeps at most ${limit} watchlists; delete one to make room.`,
          },
          () => watchlistCount(em, owner),
        );
        const at = ctx.clock.now();
        const row = await insertWatchlist(em, { id: newId("wlt"), owner, name, createdAt: at, updatedAt: at });
        return answer(em, row);
      });
    },

    async getWatchlist(request, call) {
      const owner = actingPerson(call);
      const em = ctx.orm.em.fork();
      return answer(em, await own(em, request.id, owner));
    },

    async renameWatchlist(request, call) {
      const owner = actingPerson(call);
      const name = request.name.trim();
      return ctx.transaction(async (em) => {
        const row = await own(em, request.id, owner);
        await changeWatchlist(em, row, { name, updatedAt: ctx.clock.now() });
        return answer(em, row);
      });
    },

    async deleteWatchlist(request, call) {
      const owner = actingPerson(call);
      return ctx.transaction(async (em) => {
        const row = await own(em, request.id, owner);
        await deleteWatchlist(em, row.id);
        return create(DeletedResultSchema, { id: row.id, deleted: true });
      });
    },

    async putWatchlistItem(request, call) {
      const owner = actingPerson(call);
      const symbol = requireSymbol("symbol", request.symbol);
      const limit = ctx.settings.itemsPerWatchlist;
      return ctx.transaction(async (em) => {
        const row = await own(em, request.id, owner);
        const instrument = await instrumentBySymbol(em, symbol);
        if (!instrument) throw problem(404, "instrument.not_found", `There is no instrument ${symbol}.`, { symbol });
        // Adding one already there changes nothing and takes no room.
        if (!(await hasItem(em, row.id, instrument.id))) {
          await requireBelowCap(
            em,
            {
              name: "trade.watchlist_items",
              owner: row.id,
              limit,
              code: "watchlist.items_limit",
              detail: `A watchlist holds at most ${limit} instruments; remove one to make room.`,
            },
            () => itemCount(em, row.id),
          );
          if (await addItem(em, row.id, instrument.id, ctx.clock.now())) row.updatedAt = ctx.clock.now();
        }
        await changeWatchlist(em, row);
        return answer(em, row);
      });
    },

    async deleteWatchlistItem(request, call) {
      const owner = actingPerson(call);
      const symbol = requireSymbol("symbol", request.symbol);
      return ctx.transaction(async (em) => {
        const row = await own(em, request.id, owner);
        const instrument = await instrumentBySymbol(em, symbol);
        if (instrument && (await removeItem(em, row.id, instrument.id))) row.updatedAt = ctx.clock.now();
        await changeWatchlist(em, row);
        return answer(em, row);
      });
    },
  };
}
