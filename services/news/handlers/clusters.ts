import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ClusterListSchema,
  ClusterManageResultSchema,
  type ClusterReadResult,
  ClusterReadResultSchema,
  IngestSchema,
  IngestSourceSchema,
  type NewsClusterService,
} from "../../../gen/pf/news/v1/clusters_pb.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { clusterToProto, itemToProto } from "../db/answers.js";
import { clusterById, clusterPage, historyOf, membersOf } from "../db/clusters.js";
import { ingestCounts, ingestTotals, itemsById } from "../db/items.js";
import { clustersOf, mergeClusters, reverseChange, splitCluster } from "../cluster-changes.js";

type ClusterHandlers = ServiceImpl<typeof NewsClusterService>;

const read = (result: ClusterReadResult["result"]) => create(ClusterReadResultSchema, { result });

/** The cluster, ingestion and source-item routes. */
export function clusterHandlers(ctx: ServiceContext): ClusterHandlers {
  return {
    async listClusters(request, call) {
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      return ctx.transaction(async (em) => {
        const rows = await clusterPage(em, { all: request.all, before, limit });
        const { items, nextCursor } = page(rows, limit, (row) => [new Date(row.updated_at).toISOString(), row.id]);
        const clusters = await clustersOf(
          em,
          items.map((row) => row.id),
        );
        return read({ case: "clusters", value: create(ClusterListSchema, { clusters, nextCursor }) });
      });
    },

    async getCluster(request, call) {
      return ctx.transaction(async (em) => {
        const row = await clusterById(em, request.id);
        if (!row) throw problem(404, "cluster.not_found", "No such cluster.");
        const members = await membersOf(em, [row.id]);
        const items = await itemsById(
          em,
          members.map((member) => member.item_id),
        );
        return read({ case: "cluster", value: clusterToProto(row, members, items, await historyOf(em, row.id)) });
      });
    },

    async mergeCluster(request, call) {
      const by = relatedActor(call);
      const audit = await ctx.transaction((em) => mergeClusters(ctx, em, request, by));
      return create(ClusterManageResultSchema, audit);
    },

    async splitCluster(request, call) {
      const by = relatedActor(call);
      const audit = await ctx.transaction((em) => splitCluster(ctx, em, request, by));
      return create(ClusterManageResultSchema, audit);
    },

    async reverseClusterChange(request, call) {
      const by = relatedActor(call);
      const audit = await ctx.transaction((em) => reverseChange(ctx, em, request, by));
      return create(ClusterManageResultSchema, audit);
    },

    async getIngest(request, call) {
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const after = decodeTextCursor(request.cursor, 1)?.[0];
      const [counts, totals] = await ctx.transaction(async (em) => [
        await ingestCounts(em, { after, limit }),
        await ingestTotals(em),
      ]);
      const { items, nextCursor } = page(counts, limit, (row) => [row.source_key]);
      const sources = items.map((row) =>
        create(IngestSourceSchema, {
          sourceKey: row.source_key,
          items: Number(row.items),
          duplicates: Number(row.duplicates),
          removed: Number(row.removed),
          lastReceivedAt: timestampFromDate(new Date(row.last_received_at)),
          lastChangeOrder: BigInt(row.last_change_order),
        }),
      );
      const ingest = create(IngestSchema, {
        sources,
        items: Number(totals.items),
        duplicates: Number(totals.duplicates),
        removed: Number(totals.removed),
        nextCursor,
      });
      return read({ case: "ingest", value: ingest });
    },

    async getSourceItem(request, call) {
      const item = await ctx.transaction(async (em) => (await itemsById(em, [request.id])).get(request.id));
      if (!item) throw problem(404, "source_item.not_found", "News has not received this item.");
      return read({ case: "sourceItem", value: itemToProto(item) });
    },
  };
}
