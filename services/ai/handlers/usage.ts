import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import {
  AuditEntrySchema,
  RequestLogSchema,
  UsageResultSchema,
  type UsageQuery,
} from "../../../gen/pf/ai/v1/usage_pb.js";
import { decodeCursor, decodeTimeCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import type { AuditRow, RequestLogRow } from "../db/entities.js";
import { runToProto } from "../db/runs.js";
import { auditPage, requestsPage, runsPage, summaryFacts, usageTotals, type Span, type TotalKey } from "../db/usage.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  "listRuns" | "getUsage" | "getSummary" | "listAudit" | "listRequests"
>;

const DAY_MS = 86_400_000;

/** The query's since–until (since inclusive, until exclusive); 400 naming until when it is not after since. */
function spanOf(query: UsageQuery): Span {
  const since = query.since ? timestampDate(query.since) : undefined;
  const until = query.until ? timestampDate(query.until) : undefined;
  if (since && until && until <= since) throw invalid("until", "until must be after since.");
  return { since, until };
}

/** A usage page's cursor: its last total's window start and keys, as the page made it. */
function totalCursor(cursor: string): TotalKey | undefined {
  const position = decodeCursor(cursor);
  if (position === undefined) return undefined;
  const [windowStart, ...keys] = position;
  const at = typeof windowStart === "string" ? new Date(windowStart) : new Date(Number.NaN);
  if (position.length !== 5 || Number.isNaN(at.getTime()) || !keys.every((key) => typeof key === "string"))
    throw invalid("cursor", "cursor is not one this service issued");
  const [namespace, caller, provider, model] = keys as string[];
  return { windowStart: at, namespace: namespace!, caller: caller!, provider: provider!, model: model! };
}

const at = (date: Date) => timestampFromDate(new Date(date));
const byTime = (time: Date, id: string) => [new Date(time).toISOString(), id];

function requestToProto(row: RequestLogRow) {
  return create(RequestLogSchema, {
    id: row.id,
    runId: row.runId,
    caller: row.caller,
    namespace: row.namespace,
    operation: row.operation,
    provider: row.provider,
    model: row.model,
    outcome: row.outcome,
    httpStatus: row.httpStatus,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    latencyMs: row.latencyMs,
    errorCode: row.errorCode,
    at: at(row.at),
  });
}

function auditToProto(row: AuditRow) {
  return create(AuditEntrySchema, {
    id: row.id,
    actor: row.actor,
    action: row.action,
    targetKind: row.targetKind,
    targetKey: row.targetKey,
    // Stored as the JSON objects recordAudit wrote.
    before: (row.before ?? undefined) as JsonObject | undefined,
    after: (row.after ?? undefined) as JsonObject | undefined,
    at: at(row.at),
  });
}

/** Usage reads: any caller's runs, usage totals, the summary, the audit log and the request log. */
export function usageHandlers(ctx: AiContext): Handlers {
  const em = () => ctx.orm.em.fork();
  return {
    async listRuns(query) {
      const limit = pageLimit(query.limit);
      const { namespace, caller, workflow, operation, state } = query;
      const rows = await runsPage(em(), {
        filters: { namespace, caller, workflow, operation, state },
        span: spanOf(query),
        after: decodeTimeCursor(query.cursor),
        limit,
      });
      const { items, nextCursor } = page(rows, limit, (row) => byTime(row.createdAt, row.id));
      return create(UsageResultSchema, { runs: items.map(runToProto), nextCursor });
    },

    /** Totals per window over since–until: the last day (to now) when since is unset. */
    async getUsage(query) {
      const limit = pageLimit(query.limit);
      const span = spanOf(query);
      const since = span.since ?? new Date((span.until ?? ctx.clock.now()).getTime() - DAY_MS);
      const { namespace, caller, provider, model } = query;
      const rows = await usageTotals(em(), {
        window: query.window || "hour",
        filters: { namespace, caller, provider, model },
        span: { since, until: span.until },
        after: totalCursor(query.cursor),
        limit,
      });
      const { items, nextCursor } = page(rows, limit, (row) => [
        row.windowStart.toISOString(),
        row.namespace,
        row.caller,
        row.provider,
        row.model,
      ]);
      return create(UsageResultSchema, {
        usage: items.map((row) => ({ ...row, windowStart: at(row.windowStart) })),
        nextCursor,
      });
    },

    /** The last 24 hours' runs; providers, breakers and definitions as they stand. */
    async getSummary() {
      const since = new Date(ctx.clock.now().getTime() - DAY_MS);
      const facts = await summaryFacts(em(), since);
      return create(UsageResultSchema, { summary: { ...facts, since: at(since) } });
    },

    async listAudit(query) {
      const limit = pageLimit(query.limit);
      const rows = await auditPage(em(), {
        filters: { targetKind: query.targetKind, targetKey: query.targetKey },
        span: spanOf(query),
        after: decodeTimeCursor(query.cursor),
        limit,
      });
      const { items, nextCursor } = page(rows, limit, (row) => byTime(row.at, row.id));
      return create(UsageResultSchema, { audit: items.map(auditToProto), nextCursor });
    },

    async listRequests(query) {
      const limit = pageLimit(query.limit);
      const { namespace, caller, provider, model } = query;
      const rows = await requestsPage(em(), {
        filters: { namespace, caller, provider, model },
        span: spanOf(query),
        after: decodeTimeCursor(query.cursor),
        limit,
      });
      const { items, nextCursor } = page(rows, limit, (row) => byTime(row.at, row.id));
      return create(UsageResultSchema, { requests: items.map(requestToProto), nextCursor });
    },
  };
}
