import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  ItemDetailSchema,
  ItemPageSchema,
  ManualItemInputSchema,
  ManualItemsResultSchema,
} from "../../../gen/pf/sources/v1/items_pb.js";
import { ItemReadResultSchema, SourceManageResultSchema } from "../../../gen/pf/sources/v1/requests_pb.js";
import type { SourcesService } from "../../../gen/pf/sources/v1/sources_pb.js";
import { staffActor } from "../../kit/auth/principal.js";
import { pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import type { SourcesContext } from "../context.js";
import type { SourceRow } from "../db/entities.js";
import {
  changeItem,
  itemById,
  itemsPage,
  itemToProto,
  lockChangeCounter,
  revisionsOf,
  revisionToProto,
  sourceKeyOfItem,
  writeItems,
} from "../db/items.js";
import { sourceByKey, sourcesByKeys, sourceStatusOf } from "../db/sources.js";
import { manualEntry, MANUAL_PARSER, rawHashOf } from "../domain/items.js";
import { itemRemoved } from "../events.js";
import { takeEntries } from "../intake.js";

type ItemHandlers = Pick<ServiceImpl<typeof SourcesService>, "listItems" | "getItem" | "removeItem" | "addItems">;

const HOUR = 3_600_000;

/** 409 source.not_manual for a fetched source, 409 source.disabled for a disabled one. */
function requireOpenManual(source: SourceRow): void {
  if (source.kind !== "manual")
    throw problem(409, "source.not_manual", "Only manual sources take items by hand; fetched ones are fetched.");
  if (!source.enabled) throw problem(409, "source.disabled", "The source is disabled.");
}

/**
 * Items with provenance, by change order; removal with a reason (sticky, idempotent); manual items with their
 * evidence URL. Every items page states the staleness of the sources it contains.
 */
export function itemHandlers(ctx: SourcesContext): ItemHandlers {
  const statusesOf = async (em: EntityManager, keys: Iterable<string>) => {
    const now = ctx.clock.now();
    return (await sourcesByKeys(em, [...new Set(keys)])).map((row) => sourceStatusOf(row, now));
  };

  return {
    async listItems(request) {
      const limit = pageLimit(request.limit);
      const sourceKey = request.sourceKey === "" ? undefined : request.sourceKey;
      const em = ctx.orm.em.fork();
      const rows = await itemsPage(
        em,
        { sourceKey, after: request.after, includeRemoved: request.includeRemoved },
        limit,
      );
      const items = rows.slice(0, limit);
      const keys = items.map((row) => row.sourceKey);
      // A page of one source states that source's staleness even when it holds no item.
      const sources = await statusesOf(em, sourceKey ? [sourceKey, ...keys] : keys);
      return create(ItemReadResultSchema, {
        result: {
          case: "items",
          value: create(ItemPageSchema, {
            items: items.map(itemToProto),
            sources,
            nextAfter: items.length > 0 ? BigInt(items[items.length - 1].changeOrder) : request.after,
            hasMore: rows.length > limit,
          }),
        },
      });
    },

    async getItem(request) {
      const em = ctx.orm.em.fork();
      const row = await itemById(em, request.id);
      const revisions = await revisionsOf(em, row.id);
      const [source] = await statusesOf(em, [row.sourceKey]);
      return create(ItemReadResultSchema, {
        result: {
          case: "item",
          value: create(ItemDetailSchema, {
            item: itemToProto(row),
            revisions: revisions.map((revision) => revisionToProto(row.sourceKey, revision)),
            source,
          }),
        },
      });
    },

    async removeItem(request, call) {
      const reason = request.reason.trim();
      const by = staffActor(call);
      return ctx.transaction(async (em) => {
        const answer = (row: Parameters<typeof itemToProto>[0]) =>
          create(SourceManageResultSchema, { result: { case: "item", value: itemToProto(row) } });
        // The lock order of every item change: its source, the counter, then the item. Holding the source keeps
        // an intake of that source (which reads the item before taking the counter) from revising it meanwhile.
        await sourceByKey(em, await sourceKeyOfItem(em, request.id), true);
        const counter = await lockChangeCounter(em);
        const row = await itemById(em, request.id, true);
        // Removed already: answered as it is, its first reason kept.
        if (row.removedAt) return answer(row);
        const changeOrder = counter.next();
        await counter.save();
        await changeItem(em, row, { removedAt: ctx.clock.now(), removedReason: reason, removedBy: by, changeOrder });
        await itemRemoved(em, row);
        return answer(row);
      });
    },

    async addItems(request) {
      const { key } = request;
      return ctx.transaction(async (em) => {
        const source = await sourceByKey(em, key, true);
        requireOpenManual(source);
        const at = ctx.clock.now();
        const limit = ctx.settings.itemRequestsPerHour;
        await rateLimit(em, [{ name: "sources.items.add", key, limit, windowMs: HOUR }], at);
        const entries = request.items.map((input, index) => ({
          entry: manualEntry(`items[${index}]`, {
            ...input,
            publishedAt: input.publishedAt ? timestampDate(input.publishedAt) : undefined,
          }),
          retrieval: {
            retrievedAt: at,
            rawBodyHash: rawHashOf(toJsonString(ManualItemInputSchema, input)),
            parserVersion: MANUAL_PARSER,
            terms: source.termsNote,
          },
        }));
        const { items, counts } = await takeEntries(em, key, entries);
        await writeItems(em);
        return create(SourceManageResultSchema, {
          result: {
            case: "items",
            value: create(ManualItemsResultSchema, { items: items.map(itemToProto), ...counts }),
          },
        });
      });
    },
  };
}
