import type { HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { RunCreateResultSchema, type RunCreateResult } from "../../../gen/pf/ai/v1/runs_pb.js";
import { answerStatus } from "../../kit/handler/status.js";
import { awaitEnd } from "../../kit/runtime/wakes.js";
import type { AiContext } from "../context.js";
import type { RunRow } from "../db/entities.js";
import { runById, runToProto } from "../db/runs.js";
import { hasEnded, type RunState } from "../domain/operations.js";

/** How often a waiter reads its run again unprompted: what another instance did reaches it this late at most. */
export const RECHECK_MS = 250;

/** What a wait leaves of the call's deadline, so the 202 still reaches the caller in time. */
const ANSWER_MARGIN_MS = 1_000;

/** The run once it has ended, or as it stands when `ms` passed or `signal` aborted. */
export function awaitRun(ctx: AiContext, id: string, ms: number, signal?: AbortSignal): Promise<RunRow> {
  const read = async () => (await runById(ctx.orm.em.fork(), id))!;
  const ended = (row: RunRow) => hasEnded(row.state as RunState);
  return awaitEnd(ctx.news, { key: id, read, ended, recheckMs: RECHECK_MS }, ms, signal);
}

/**
 * A started run as the call answers it: waited for up to wait_ms (0: PF_AI_MAX_WAIT_MS, larger: capped; and short
 * of the call's deadline); ended, 200 (a failed run too: the call worked, the run says why the model did not);
 * still running, 202 with Location, where its caller reads it.
 */
export async function answerRun(
  ctx: AiContext,
  call: HandlerContext,
  started: RunRow,
  waitMs: number,
): Promise<RunCreateResult> {
  const left = call.timeoutMs();
  const cap = Math.min(ctx.settings.maxWaitMs, left === undefined ? Infinity : left - ANSWER_MARGIN_MS);
  const wait = Math.max(0, waitMs === 0 ? cap : Math.min(waitMs, cap));
  const row = await awaitRun(ctx, started.id, wait, call.signal);
  if (!hasEnded(row.state as RunState)) {
    answerStatus(call, 202);
    call.responseHeader.set("location", `/ai/api/v1/runs/${row.id}`);
  }
  return create(RunCreateResultSchema, { run: runToProto(row) });
}
