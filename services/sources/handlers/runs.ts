import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { HealthReportSchema } from "../../../gen/pf/sources/v1/registry_pb.js";
import { SourceManageResultSchema, SourceReadResultSchema } from "../../../gen/pf/sources/v1/requests_pb.js";
import { RunListSchema, RunState } from "../../../gen/pf/sources/v1/runs_pb.js";
import type { SourcesService } from "../../../gen/pf/sources/v1/sources_pb.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import type { SourcesContext } from "../context.js";
import { textOf } from "../db/enums.js";
import { activeRun, queueRun, runPosition, runsPage, runToProto } from "../db/runs.js";
import { sourceByKey, sourcesPage, sourceStatusOf } from "../db/sources.js";
import { isFetched, type Kind } from "../domain/sources.js";

type RunHandlers = Pick<
  ServiceImpl<typeof SourcesService>,
  "listRuns" | "listSourceRuns" | "fetchSource" | "getHealth"
>;

const MINUTE = 60_000;

/** Fetch runs (every attempt, with its state), the manual trigger, and health per source. */
export function runHandlers(ctx: SourcesContext): RunHandlers {
  const runs = async (request: { state: RunState; limit?: number; cursor: string }, sourceKey?: string) => {
    const limit = pageLimit(request.limit);
    const before = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
    if (before && Number.isNaN(Date.parse(before[0]))) throw invalid("cursor", "cursor is not one this service issued");
    const rows = await runsPage(
      ctx.orm.em.fork(),
      { sourceKey, state: textOf(RunState, request.state), before },
      limit,
    );
    const { items, nextCursor } = page(rows, limit, runPosition);
    return create(SourceReadResultSchema, {
      result: { case: "runs", value: create(RunListSchema, { runs: items.map(runToProto), nextCursor }) },
    });
  };

  return {
    listRuns: (request) => runs(request, request.sourceKey === "" ? undefined : request.sourceKey),

    async listSourceRuns(request) {
      const { key } = request;
      await sourceByKey(ctx.orm.em.fork(), key);
      return runs(request, key);
    },

    async fetchSource(request) {
      const { key } = request;
      return ctx.transaction(async (em) => {
        const source = await sourceByKey(em, key, true);
        if (!isFetched(source.kind as Kind))
          throw problem(409, "source.not_fetched", "A manual source is never fetched: add its items instead.");
        if (!source.enabled) throw problem(409, "source.disabled", "The source is disabled: enable it to fetch it.");
        // One run per source at a time: a trigger while one is queued or running answers that one.
        let run = await activeRun(em, key);
        if (!run) {
          const at = ctx.clock.now();
          const limit = ctx.settings.fetchTriggersPerMinute;
          await rateLimit(em, [{ name: "sources.fetch.trigger", key, limit, windowMs: MINUTE }], at);
          run = await queueRun(em, key, "manual", at);
        }
        return create(SourceManageResultSchema, { result: { case: "run", value: runToProto(run) } });
      });
    },

    async getHealth(request) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await sourcesPage(ctx.orm.em.fork(), { after }, limit);
      const { items, nextCursor } = page(rows, limit, (row) => [row.key]);
      const now = ctx.clock.now();
      return create(SourceReadResultSchema, {
        result: {
          case: "health",
          value: create(HealthReportSchema, {
            sources: items.map((row) => sourceStatusOf(row, now)),
            checkedAt: timestampFromDate(now),
            nextCursor,
          }),
        },
      });
    },
  };
}
