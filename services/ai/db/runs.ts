import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { RunSchema, type Run } from "../../../gen/pf/ai/v1/runs_pb.js";
import { sql } from "../../kit/db/sql.js";
import type { Citation } from "../providers/provider.js";
import { RunRow } from "./entities.js";

/** What a run produced, as stored in `runs.output` (the fields its operation produces). */
export interface StoredOutput {
  text?: string;
  labels?: { label: string; score: number }[];
  fields?: Record<string, unknown>;
  embeddings?: number[][];
}

/** A run as it starts: `running`, held by this instance until `leaseUntil`. */
export interface NewRun {
  id: string;
  operation: string;
  workflow: string;
  workflowVersion: number;
  namespace: string;
  caller: string;
  request: Record<string, unknown>;
  cacheLookup: boolean;
  retryOf: string | null;
  leaseUntil: Date;
  at: Date;
}

/** How a run ended (written once, by whoever moves it off `running` first). */
export interface RunEnd {
  state: "succeeded" | "failed" | "canceled";
  provider: string;
  model: string;
  stub: boolean;
  inputTokens: number;
  outputTokens: number;
  cacheHit: boolean;
  output: StoredOutput | null;
  citations: Citation[];
  failureCode: string;
  failureDetail: string;
  attempts: number;
}

/** A run by its id, read afresh. */
export async function runById(em: EntityManager, id: string): Promise<RunRow | undefined> {
  return (await em.findOne(RunRow, { id }, { refresh: true })) ?? undefined;
}

/**
 * Starts a run. A retry's insert meets the unique index on retry_of when another retry of the same run won: then
 * nothing is written and false answers (the caller reads the winner).
 */
export async function insertRun(em: EntityManager, run: NewRun): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `insert into {runs} (id, operation, workflow, workflow_version, namespace, caller, state, request, cache_lookup,
       retry_of, lease_until, created_at, started_at)
     values (?, ?, ?, ?, ?, ?, 'running', ?::jsonb, ?, ?, ?, ?, ?)
     on conflict (retry_of) where retry_of is not null do nothing
     returning id`,
    [
      run.id,
      run.operation,
      run.workflow,
      run.workflowVersion,
      run.namespace,
      run.caller,
      JSON.stringify(run.request),
      run.cacheLookup,
      run.retryOf,
      run.leaseUntil,
      run.at,
      run.at,
    ],
  );
  if (rows.length === 0) return false;
  if (run.retryOf !== null) await sql(em, `update {runs} set retried_by = ? where id = ?`, [run.id, run.retryOf]);
  return true;
}

/** The run that retries `id`, if one was made. */
export async function retryOfRun(em: EntityManager, id: string): Promise<RunRow | undefined> {
  return (await em.findOne(RunRow, { retryOf: id }, { refresh: true })) ?? undefined;
}

/**
 * Extends a running run's lease. Answers false when the run is no longer running (canceled or reaped elsewhere):
 * its executor stops.
 */
export async function renewRunLease(em: EntityManager, id: string, until: Date): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `update {runs} set lease_until = ? where id = ? and state = 'running' returning id`,
    [until, id],
  );
  return rows.length > 0;
}

/**
 * Ends a run that is still running (only one of a finish, a cancel and the reaper wins), and for the reaper only
 * while its lease has lapsed; answers the ended row, or undefined when it had ended already.
 */
export async function endRun(
  em: EntityManager,
  id: string,
  end: RunEnd,
  at: Date,
  lapsed = false,
): Promise<RunRow | undefined> {
  const rows = await sql<{ id: string }>(
    em,
    `update {runs} set state = ?, provider = ?, model = ?, stub = ?, input_tokens = ?, output_tokens = ?,
       cache_hit = ?, output = ?::jsonb, citations = ?::jsonb, failure_code = ?, failure_detail = ?, attempts = ?,
       latency_ms = greatest(0, round(extract(epoch from (?::timestamptz - created_at)) * 1000)),
       lease_until = null, ended_at = ?
     where id = ? and state in ('queued', 'running') and (not ? or lease_until < ?) returning id`,
    [
      end.state,
      end.provider,
      end.model,
      end.stub,
      end.inputTokens,
      end.outputTokens,
      end.cacheHit,
      end.output === null ? null : JSON.stringify(end.output),
      JSON.stringify(end.citations),
      end.failureCode,
      end.failureDetail,
      end.attempts,
      at,
      at,
      id,
      lapsed,
      at,
    ],
  );
  return rows.length > 0 ? runById(em, id) : undefined;
}

/** What a run's calls cost when it ended before them (canceled while a call ran): its usage and attempts. */
export async function settleEndedRun(em: EntityManager, id: string, end: RunEnd): Promise<void> {
  await sql(
    em,
    `update {runs} set input_tokens = ?, output_tokens = ?, attempts = ?,
       provider = case when provider = '' then ? else provider end, model = case when model = '' then ? else model end
     where id = ? and state not in ('queued', 'running')`,
    [end.inputTokens, end.outputTokens, end.attempts, end.provider, end.model, id],
  );
}

/** Runs whose lease lapsed while running (their instance was lost), oldest first. */
export async function lapsedRuns(em: EntityManager, now: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from {runs} where state in ('queued', 'running') and lease_until < ? order by lease_until limit ?`,
    [now, limit],
  );
  return rows.map((row) => row.id);
}

/** The run as the contract answers it: output once it produced one, the failure once failed. */
export function runToProto(row: RunRow): Run {
  const output = (row.output ?? null) as StoredOutput | null;
  const at = (date: Date | null | undefined) => (date ? timestampFromDate(new Date(date)) : undefined);
  return create(RunSchema, {
    id: row.id,
    operation: row.operation,
    workflow: row.workflow,
    workflowVersion: row.workflowVersion,
    namespace: row.namespace,
    caller: row.caller,
    state: row.state,
    provider: row.provider,
    model: row.model,
    stub: row.stub,
    usage: { inputTokens: row.inputTokens, outputTokens: row.outputTokens },
    latencyMs: row.latencyMs,
    cacheHit: row.cacheHit,
    output: output
      ? {
          text: output.text ?? "",
          labels: output.labels ?? [],
          // Stored as the JSON the provider produced.
          fields: output.fields as JsonObject | undefined,
          embeddings: (output.embeddings ?? []).map((values) => ({ values })),
        }
      : undefined,
    citations: (row.citations as unknown as Citation[]).map((citation) => ({ ...citation })),
    failure: row.state === "failed" ? { code: row.failureCode, detail: row.failureDetail } : undefined,
    retryOf: row.retryOf ?? "",
    retriedBy: row.retriedBy ?? "",
    attempts: row.attempts,
    createdAt: at(row.createdAt),
    endedAt: at(row.endedAt),
  });
}
