import type { EntityManager, FilterQuery } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { AuditRow, RequestLogRow, RunRow } from "./entities.js";

/** From (inclusive) and until (exclusive) these times; either may be open. */
export interface Span {
  since?: Date;
  until?: Date;
}

/** Where a page of a newest-first list starts: after this row's time and id. */
export interface Position {
  at: Date;
  id: string;
}

/** One page's worth: `limit + 1` rows are read, so the page knows whether another follows. */
interface PageAsk<F> {
  filters: F;
  span: Span;
  after?: Position;
  limit: number;
}

/** The filters given (an empty one filters nothing). */
const only = (filters: object) => Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== ""));

/** The span on `field`, and the rows after the cursor's position in (field desc, id desc) order. */
function newestFirst(field: string, span: Span, after: Position | undefined): Record<string, unknown> {
  const range = { ...(span.since ? { $gte: span.since } : {}), ...(span.until ? { $lt: span.until } : {}) };
  return {
    ...(Object.keys(range).length > 0 ? { [field]: range } : {}),
    ...(after ? { $or: [{ [field]: { $lt: after.at } }, { [field]: after.at, id: { $lt: after.id } }] } : {}),
  };
}

export interface RunFilters {
  namespace: string;
  caller: string;
  workflow: string;
  operation: string;
  state: string;
}

/** Any caller's runs, newest first. */
export function runsPage(em: EntityManager, ask: PageAsk<RunFilters>): Promise<RunRow[]> {
  const where = { ...only(ask.filters), ...newestFirst("createdAt", ask.span, ask.after) } as FilterQuery<RunRow>;
  return em.find(RunRow, where, { orderBy: { createdAt: "desc", id: "desc" }, limit: ask.limit + 1, refresh: true });
}

export interface RequestFilters {
  namespace: string;
  caller: string;
  provider: string;
  model: string;
}

/** Provider calls, newest first. */
export function requestsPage(em: EntityManager, ask: PageAsk<RequestFilters>): Promise<RequestLogRow[]> {
  const where = { ...only(ask.filters), ...newestFirst("at", ask.span, ask.after) } as FilterQuery<RequestLogRow>;
  return em.find(RequestLogRow, where, { orderBy: { at: "desc", id: "desc" }, limit: ask.limit + 1, refresh: true });
}

export interface AuditFilters {
  targetKind: string;
  targetKey: string;
}

/** Audited changes, newest first. */
export function auditPage(em: EntityManager, ask: PageAsk<AuditFilters>): Promise<AuditRow[]> {
  const where = { ...only(ask.filters), ...newestFirst("at", ask.span, ask.after) } as FilterQuery<AuditRow>;
  return em.find(AuditRow, where, { orderBy: { at: "desc", id: "desc" }, limit: ask.limit + 1, refresh: true });
}

/** One usage total's keys: its window and what it counts per. */
export interface TotalKey {
  windowStart: Date;
  namespace: string;
  caller: string;
  provider: string;
  model: string;
}

export interface UsageTotalRow extends TotalKey {
  runs: number;
  failed: number;
  cacheHits: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: bigint;
}

/** A model's estimated cost of `input` and `output` token sums: micro-USD, integer, rounded half up. */
const COST = (input: string, output: string) =>
  `div(${input}::numeric * coalesce(m.input_micros_per_1k, 0) + ${output}::numeric * coalesce(m.output_micros_per_1k, 0) + 500, 1000)`;

/**
 * Runs totalled per window (UTC) and namespace, caller, provider and model over a span, newest window first (then
 * by its keys); the cost from each model's prices.
 */
export async function usageTotals(
  em: EntityManager,
  ask: { window: string; filters: RequestFilters; span: Span & { since: Date }; after?: TotalKey; limit: number },
): Promise<UsageTotalRow[]> {
  const filters = only(ask.filters);
  // The names are RequestFilters' own, each its column's.
  const where = Object.keys(filters).map((name) => `and r.${name} = ?`);
  const after = ask.after
    ? `where t.window_start < ? or (t.window_start = ? and (t.namespace, t.caller, t.provider, t.model) > (?, ?, ?, ?))`
    : "";
  const rows = await sql<{
    window_start: Date;
    namespace: string;
    caller: string;
    provider: string;
    model: string;
    runs: string;
    failed: string;
    cache_hits: string;
    input_tokens: string;
    output_tokens: string;
    cost_micros: string;
  }>(
    em,
    `with totals as (
       select date_trunc(?, r.created_at, 'UTC') as window_start, r.namespace, r.caller, r.provider, r.model,
         count(*) as runs, count(*) filter (where r.state = 'failed') as failed,
         count(*) filter (where r.cache_hit) as cache_hits,
         coalesce(sum(r.input_tokens), 0) as input_tokens, coalesce(sum(r.output_tokens), 0) as output_tokens
       from {runs} r
       where r.created_at >= ? ${ask.span.until ? "and r.created_at < ?" : ""} ${where.join(" ")}
       group by 1, 2, 3, 4, 5)
     select t.*, (${COST("t.input_tokens", "t.output_tokens")})::text as cost_micros
     from totals t left join {models} m on m.provider = t.provider and m.model = t.model
     ${after}
     order by t.window_start desc, t.namespace, t.caller, t.provider, t.model
     limit ?`,
    [
      ask.window,
      ask.span.since,
      ...(ask.span.until ? [ask.span.until] : []),
      ...Object.values(filters),
      ...(ask.after
        ? [
            ask.after.windowStart,
            ask.after.windowStart,
            ask.after.namespace,
            ask.after.caller,
            ask.after.provider,
            ask.after.model,
          ]
        : []),
      ask.limit + 1,
    ],
  );
  return rows.map((row) => ({
    windowStart: new Date(row.window_start),
    namespace: row.namespace,
    caller: row.caller,
    provider: row.provider,
    model: row.model,
    runs: Number(row.runs),
    failed: Number(row.failed),
    cacheHits: Number(row.cache_hits),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costMicros: BigInt(row.cost_micros),
  }));
}

export interface SummaryFacts {
  runsSucceeded: number;
  runsFailed: number;
  runsCanceled: number;
  runsActive: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: bigint;
  cacheHits: number;
  providersEnabled: number;
  providersDisabled: number;
  breakersOpen: string[];
  definitionsActive: number;
  routesDisabled: string[];
}

/** The service at a glance: runs since `since` (by state, tokens, cost per model), providers and definitions now. */
export async function summaryFacts(em: EntityManager, since: Date): Promise<SummaryFacts> {
  const [runs] = await sql<Record<string, string>>(
    em,
    `with per_model as (
       select r.provider, r.model,
         count(*) filter (where r.state = 'succeeded') as succeeded, count(*) filter (where r.state = 'failed') as failed,
         count(*) filter (where r.state = 'canceled') as canceled,
         count(*) filter (where r.state in ('queued', 'running')) as active,
         count(*) filter (where r.cache_hit) as cache_hits,
         sum(r.input_tokens) as input_tokens, sum(r.output_tokens) as output_tokens
       from {runs} r where r.created_at >= ? group by 1, 2)
     select coalesce(sum(succeeded), 0) as succeeded, coalesce(sum(failed), 0) as failed,
       coalesce(sum(canceled), 0) as canceled, coalesce(sum(active), 0) as active,
       coalesce(sum(cache_hits), 0) as cache_hits, coalesce(sum(input_tokens), 0) as input_tokens,
       coalesce(sum(output_tokens), 0) as output_tokens,
       coalesce(sum(${COST("p.input_tokens", "p.output_tokens")}), 0)::text as cost_micros
     from per_model p left join {models} m on m.provider = p.provider and m.model = p.model`,
    [since],
  );
  const providers = await sql<{ key: string; enabled: boolean; breaker_state: string }>(
    em,
    `select key, enabled, breaker_state from {providers} order by key`,
  );
  const [definitions] = await sql<{ active: string }>(
    em,
    `select count(*) as active from {definitions} d
     where exists (select 1 from {definition_versions} v where v.kind = d.kind and v.key = d.key and v.status = 'active')`,
  );
  const routes = await sql<{ key: string }>(
    em,
    `select key from {definitions} where kind = 'route' and status = 'disabled' order by key`,
  );
  return {
    runsSucceeded: Number(runs!.succeeded),
    runsFailed: Number(runs!.failed),
    runsCanceled: Number(runs!.canceled),
    runsActive: Number(runs!.active),
    inputTokens: Number(runs!.input_tokens),
    outputTokens: Number(runs!.output_tokens),
    costMicros: BigInt(runs!.cost_micros),
    cacheHits: Number(runs!.cache_hits),
    providersEnabled: providers.filter((provider) => provider.enabled).length,
    providersDisabled: providers.filter((provider) => !provider.enabled).length,
    // A half-open breaker lets one trial through and refuses the rest: not closed yet.
    breakersOpen: providers.filter((provider) => provider.breaker_state !== "closed").map((provider) => provider.key),
    definitionsActive: Number(definitions!.active),
    routesDisabled: routes.map((route) => route.key),
  };
}
