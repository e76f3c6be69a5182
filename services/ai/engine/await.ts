import type { HandlerContext } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { RunCreateResultSchema, type RunCreateResult } from "../../../gen/pf/ai/v1/runs_pb.js";
import { answerAccepted, waitWithinDeadline } from "../../kit/handler/status.js";
import { awaitEnd } from "../../kit/runtime/wakes.js";
import type { AiContext } from "../context.js";
import type { RunRow } from "../db/entities.js";
import { runById, runToProto } from "../db/runs.js";
import { hasEnded, type RunState } from "../domain/operations.js";

/** How often a waiter reads its run again unprompted: what another instance did reaches it this late at most. */
export const RECHECK_MS = 250;

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
  const asked = waitMs === 0 ? ctx.settings.maxWaitMs : Math.min(waitMs, ctx.settings.maxWaitMs);
  const wait = waitWithinDeadline(call, asked);
  const row = await awaitRun(ctx, started.id, wait, call.signal);
  if (!hasEnded(row.state as RunState)) answerAccepted(call, `/ai/api/v1/runs/${row.id}`);
  return create(RunCreateResultSchema, { run: runToProto(row) });
}
