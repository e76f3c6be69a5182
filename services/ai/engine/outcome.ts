import type { EntityManager } from "@mikro-orm/postgresql";
import type { AiContext } from "../context.js";
import type { RunRow } from "../db/entities.js";
import { endRun, settleEndedRun, type RunEnd } from "../db/runs.js";
import { recordRunEvent } from "../events.js";

/** A run's end with nothing produced: a cancel, a lost instance. */
export function bareEnd(state: RunEnd["state"], failureCode = "", failureDetail = ""): RunEnd {
  return {
    state,
    provider: "",
    model: "",
    stub: false,
    inputTokens: 0,
    outputTokens: 0,
    cacheHit: false,
    output: null,
    citations: [],
    failureCode,
    failureDetail,
    attempts: 0,
  };
}

/**
 * Ends a run that is still running (`lapsed`: only if its lease lapsed), with its event, in the caller's
 * transaction; answers the ended row, or undefined when a cancel, the reaper or the executor ended it first.
 */
export async function endWithEvent(
  em: EntityManager,
  id: string,
  end: RunEnd,
  at: Date,
  lapsed = false,
): Promise<RunRow | undefined> {
  const row = await endRun(em, id, end, at, lapsed);
  if (!row) return undefined;
  await recordRunEvent(em, end.state, {
    runId: row.id,
    operation: row.operation,
    workflow: row.workflow,
    namespace: row.namespace,
    caller: row.caller,
    stub: row.stub,
    failureCode: row.failureCode || undefined,
    at,
  });
  return row;
}

/**
 * The executor's end of a run: its outcome, unless it was canceled (or reaped) meanwhile, which keeps its state
 * and takes only what the calls made so far cost. Wakes this process's waiters once committed.
 */
export async function finishRun(ctx: AiContext, id: string, end: RunEnd): Promise<void> {
  await ctx.transaction(async (em) => {
    const ended = await endWithEvent(em, id, end, ctx.clock.now());
    if (!ended) await settleEndedRun(em, id, end);
  });
  ctx.news.tell(id);
}
