import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";

/** How a provider call went, as the request log says it. */
export type CallOutcome = "ok" | "error" | "timeout" | "rate_limited" | "interrupted" | "canceled" | "refused";

/** One provider call of a run (a refusal by the breaker is logged too: the call that did not go). */
export interface RequestLog {
  runId: string;
  caller: string;
  namespace: string;
  operation: string;
  provider: string;
  model: string;
  outcome: CallOutcome;
  httpStatus: number;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  errorCode: string;
  at: Date;
}

export async function logRequest(em: EntityManager, log: RequestLog): Promise<void> {
  await sql(
    em,
    `insert into {request_logs} (id, run_id, caller, namespace, operation, provider, model, outcome, http_status,
       input_tokens, output_tokens, latency_ms, error_code, at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      newId("arq"),
      log.runId,
      log.caller,
      log.namespace,
      log.operation,
      log.provider,
      log.model,
      log.outcome,
      log.httpStatus,
      log.inputTokens,
      log.outputTokens,
      log.latencyMs,
      log.errorCode,
      log.at,
    ],
  );
}

/** Removes up to `limit` request logs written before `before`, answering how many. */
export async function removeRequestLogs(em: EntityManager, before: Date, limit: number): Promise<number> {
  const [row] = await sql<{ count: string }>(
    em,
    `with removed as (delete from {request_logs} where id in (select id from {request_logs} where at < ? limit ?)
     returning 1) select count(*) from removed`,
    [before, limit],
  );
  return Number(row.count);
}
