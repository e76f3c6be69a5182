import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { ToolsContext } from "../../context.js";
import { INLINE_TOOLS } from "../../families/index.js";
import { ToolFailure } from "../../families/tool.js";
import type { JsonObject } from "../../catalogue/descriptor.js";
import { untilAborted } from "../../../kit/runtime/abort.js";

/** An inline run's outcome (tools.run@1): its output, or the failure it ended with; how long it took. */
export type InlineOutcome =
  | { state: "succeeded"; output: JsonObject; tookMs: number }
  | { state: "failed"; failure: { code: string; detail: string }; tookMs: number };

/**
 * Runs an inline tool on a valid input within its time budget (limits.timeoutMs): the tool's signal aborts when the
 * budget passes or the caller goes away, and the run answers then even if the tool does not stop. A ToolFailure,
 * or the budget passing, is a failed run; a problem the tool throws (a target refused) is the call's answer, as is
 * the caller going away; an output the tool's schema refuses is its bug.
 */
export async function runInline(
  ctx: ToolsContext,
  tool: ToolDescriptor,
  input: JsonObject,
  caller: string,
  callSignal: AbortSignal,
): Promise<InlineOutcome> {
  const run = INLINE_TOOLS[tool.id];
  if (!run) throw new Error(`the inline tool ${tool.id} has no implementation`);
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(overBudget(tool)), tool.limits.timeoutMs);
  const signal = AbortSignal.any([budget.signal, callSignal]);
  const started = performance.now();
  const tookMs = () => Math.round(performance.now() - started);
  try {
    const output = await untilAborted(run(input, { ctx, caller, signal }), signal);
    return { state: "succeeded", output: ctx.schemas.output(tool, output), tookMs: tookMs() };
  } catch (error) {
    const failure = error instanceof ToolFailure ? error : budget.signal.aborted ? overBudget(tool) : undefined;
    if (!failure || callSignal.aborted) throw error;
    return { state: "failed", failure: { code: failure.code, detail: failure.detail }, tookMs: tookMs() };
  } finally {
    clearTimeout(timer);
  }
}

function overBudget(tool: ToolDescriptor): ToolFailure {
  return new ToolFailure(
    "tools.run.timeout",
    `The run took longer than its budget of ${tool.limits.timeoutMs / 1000} s.`,
  );
}
