import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { DiscoveryResultSchema, SeriesPointSchema } from "../../../gen/pf/live/v1/discovery_pb.js";
import type { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import { answerMessage } from "../../kit/feeds/answer.js";
import type { LiveContext } from "../context.js";
import { readSeries } from "../db/stats.js";
import { timeOf } from "../db/rows.js";

/** A stats series: the metric is one the contract names (any other is 400 naming `metric` before this runs). */
export function statsHandlers(ctx: LiveContext): Pick<ServiceImpl<typeof LiveService>, "getStatsSeries"> {
  return {
    async getStatsSeries(request, call) {
      const from = new Date(ctx.clock.now().getTime() - (request.hours ?? 24) * 3600_000);
      const rows = await readSeries(ctx, request.metric, from);
      const result = create(DiscoveryResultSchema, {
        series: {
          metric: request.metric,
          bucketSeconds: ctx.settings.statsBucketMs / 1000,
          points: rows.map((row) => create(SeriesPointSchema, { at: timeOf(row.bucket_at), value: row.value })),
        },
      });
      return answerMessage(call, DiscoveryResultSchema, result, ctx.settings.discoveryMaxAgeSeconds);
    },
  };
}
