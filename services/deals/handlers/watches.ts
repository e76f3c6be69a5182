import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import {
  WatchListSchema,
  type WatchRequest,
  WatchResultSchema,
  WatchSchema,
} from "../../../gen/pf/deals/v1/watches_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { maxLength } from "../../kit/handler/text.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { DealsContext } from "../context.js";
import { productExists } from "../db/products.js";
import {
  deleteWatch,
  insertWatch,
  notifiedOf,
  readNotified,
  readWatches,
  watchById,
  watchCount,
  type Notified,
  type StoredWatch,
} from "../db/watches.js";
import { requirePrice } from "../domain/observations.js";
import { keywordWords, type WatchKind as Kind } from "../domain/watches.js";
import { WATCH_KINDS } from "../events.js";

type WatchHandlers = Pick<ServiceImpl<typeof DealsService>, "listWatches" | "createWatch" | "deleteWatch">;

const watchToProto = (row: StoredWatch, notified: Notified = { count: 0n }) =>
  create(WatchSchema, {
    id: row.id,
    owner: row.owner,
    kind: WATCH_KINDS[row.kind as Kind],
    keyword: row.keyword,
    productId: row.productId ?? "",
    priceBelow:
      row.priceBelowMinor != null && row.priceBelowCurrency
        ? { minorUnits: BigInt(row.priceBelowMinor), currency: row.priceBelowCurrency }
        : undefined,
    query: row.query,
    notifiedCount: notified.count,
    lastNotifiedAt: notified.last ? timestampFromDate(notified.last) : undefined,
    createdAt: timestampFromDate(row.createdAt),
  });

/** Which fields each kind takes; any other field sent is refused, never ignored. */
const FIELDS: Record<Kind, (keyof WatchRequest)[]> = {
  keyword: ["keyword"],
  product: ["productId"],
  price_below: ["priceBelow", "keyword", "productId"],
  saved_search: ["query"],
};
const FIELD_NAMES = { keyword: "keyword", productId: "product_id", priceBelow: "price_below", query: "query" } as const;

/** The watch's kind (declared: one of the enum's, not unspecified); the fields another kind takes are refused. */
function kindOf(request: WatchRequest): Kind {
  const kind = (Object.keys(WATCH_KINDS) as Kind[]).find((name) => WATCH_KINDS[name] === request.kind)!;
  for (const field of Object.keys(FIELD_NAMES) as (keyof typeof FIELD_NAMES)[]) {
    const sent = field === "priceBelow" ? request.priceBelow !== undefined : request[field] !== "";
    if (sent && !FIELDS[kind].includes(field))
      throw invalid(FIELD_NAMES[field], `${FIELD_NAMES[field]} is not used by a ${kind} watch`);
  }
  return kind;
}

/**
 * Watches of the acting person: keyword, product and price-below watches
 * notify (deals.watch.matched, at most once per observation; never e-mail);
 * saved searches never do. Another person's watch answers 404.
 */
export function watchHandlers(ctx: DealsContext): WatchHandlers {
  const notFound = () => problem(404, "watch.not_found", "There is no such watch.");

  return {
    async listWatches(request, call) {
      const owner = actingPerson(call);
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await readWatches(ctx, owner, before, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      const notified = await readNotified(
        ctx,
        items.map((row) => row.id),
      );
      const watches = items.map((row) => watchToProto(row, notified.get(row.id)));
      return create(WatchResultSchema, {
        result: { case: "watches", value: create(WatchListSchema, { watches, nextCursor }) },
      });
    },

    async createWatch(request, call) {
      const owner = actingPerson(call);
      const kind = kindOf(request);
      const keyword = maxLength("keyword", request.keyword.trim(), 200);
      const query = maxLength("query", request.query.trim(), 500);
      if (kind === "keyword" && keywordWords(keyword).length === 0)
        throw invalid("keyword", "keyword needs at least one word");
      if (kind === "product" && request.productId === "")
        throw invalid("product_id", "product_id is required for a product watch");
      if (kind === "saved_search" && query === "") throw invalid("query", "query is required for a saved search");
      const priceBelow =
        kind === "price_below"
          ? requirePrice("price_below", request.priceBelow ?? { minorUnits: 0n, currency: "" })
          : null;
      if (priceBelow && priceBelow.minor <= 0n)
        throw invalid("price_below.minor_units", "price_below must be above zero");
      if (kind === "price_below" && (request.productId === "") === (keywordWords(keyword).length === 0)) {
        throw invalid("product_id", "A price-below watch names either a product_id or a keyword");
      }
      const limit = ctx.settings.watchesPerPerson;
      return ctx.transaction(async (em) => {
        if (request.productId !== "" && !(await productExists(em, request.productId))) {
          throw invalid("product_id", "product_id names no product (resolve it first)");
        }
        // Saved searches count too: each is a row kept for its owner. A deleted watch is gone and frees its room.
        await requireBelowCap(
          em,
          {
            name: "deals.watches",
            owner,
            limit,
            code: "watch.limit",
            detail: `A person keeps at most ${limit} watches and saved searches; delete one to make room.`,
          },
          () => watchCount(em, owner),
        );
        const row = await insertWatch(em, {
          owner,
          kind,
          keyword,
          keywordWords: keywordWords(keyword),
          productId: request.productId || null,
          priceBelowMinor: priceBelow?.minor ?? null,
          priceBelowCurrency: priceBelow?.currency ?? null,
          query,
          createdAt: ctx.clock.now(),
        });
        return create(WatchResultSchema, { result: { case: "watch", value: watchToProto(row) } });
      });
    },

    async deleteWatch(request, call) {
      const owner = actingPerson(call);
      return ctx.transaction(async (em) => {
        const row = await watchById(em, request.id);
        if (!row || row.owner !== owner) throw notFound();
        // Its past matches stay: they are what made each notification at most once.
        const notified = await notifiedOf(em, [row.id]);
        await deleteWatch(em, row);
        return create(WatchResultSchema, { result: { case: "watch", value: watchToProto(row, notified.get(row.id)) } });
      });
    },
  };
}
