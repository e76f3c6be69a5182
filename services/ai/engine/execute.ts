import { problemOf } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import { storeAnswer } from "../db/cache.js";
import type { RunEnd } from "../db/runs.js";
import type { ProviderAnswer, ProviderFailure } from "../providers/provider.js";
import { admit, callOnce, type Admission } from "./attempt.js";
import { holdRun, pause } from "./lease.js";
import { bareEnd, finishRun } from "./outcome.js";
import type { Plan, Target } from "./plan.js";

/** Where a run's first call stands: admitted before the run was answered (its refusals are the request's). */
export interface FirstCall {
  index: number;
  admission: Admission;
}

/** What the calls so far cost, and who was asked last. */
interface Tally {
  attempts: number;
  inputTokens: number;
  outputTokens: number;
  last?: Target;
}

/** How the run reaches its caller while it executes. */
export interface Execution {
  /** The cache entry to write a success under (unless no_cache). */
  cacheKey?: string;
  /** A chat stream's pieces of text, as the provider sends them. */
  onDelta?: (text: string) => void;
}

/**
 * Executes a started run in the background: its lease held, its controller in `ctx.running` (a cancel aborts it),
 * the attempt loop, then its end. A failure of the service itself ends the run failed rather than leaving it to
 * the reaper.
 */
export function launch(ctx: AiContext, plan: Plan, id: string, first: FirstCall, execution: Execution): void {
  const controller = new AbortController();
  ctx.running.set(id, controller);
  const release = holdRun(ctx, id, controller);
  void (async () => {
    try {
      const end = await attempts(ctx, plan, id, first, controller.signal, execution.onDelta);
      if (end.answer && execution.cacheKey) {
        const entry = { namespace: plan.namespace, operation: plan.operation, provider: end.end.provider };
        await storeAnswer(ctx, execution.cacheKey, { ...entry, model: end.end.model, answer: end.answer }).catch(
          (error: unknown) => ctx.logger.warn({ err: error, run: id }, "an answer was not cached"),
        );
      }
      await finishRun(ctx, id, end.end);
    } catch (error) {
      ctx.logger.error({ err: error, run: id }, "a run failed inside the service");
      const failed = bareEnd("failed", "ai.provider_failed", "The run failed inside the service.");
      await finishRun(ctx, id, failed).catch(() => {});
    } finally {
      release();
      ctx.running.delete(id);
    }
  })();
}

/**
 * The attempt loop: each target in order; each call admitted by the breaker (refused: the next target) and the
 * quotas (refused: the run fails with ai.quota_exceeded); a retryable failure tried again on the same target up to
 * its provider's max_retries, after a backoff a cancel cuts short. A chat stream that already sent text is not
 * tried again: it fails with what was sent.
 */
async function attempts(
  ctx: AiContext,
  plan: Plan,
  id: string,
  first: FirstCall,
  signal: AbortSignal,
  onDelta?: (text: string) => void,
): Promise<{ end: RunEnd; answer?: ProviderAnswer }> {
  const tally: Tally = { attempts: 0, inputTokens: 0, outputTokens: 0 };
  let sent = "";
  const delta = onDelta && ((text: string) => ((sent += text), onDelta(text)));
  let failure: ProviderFailure | undefined;
  let admitted: Admission | undefined = first.admission;
  for (let index = first.index; index < plan.targets.length; index++) {
    const target = plan.targets[index]!;
    for (let retry = 0; ; retry++) {
      let admission = admitted;
      admitted = undefined;
      if (!admission) {
        try {
          admission = await admit(ctx, plan, id, target);
        } catch (error) {
          const refused = problemOf(error);
          if (refused.code !== "ai.quota_exceeded") throw error;
          return { end: ended(tally, "failed", { code: refused.code, detail: refused.detail }) };
        }
        if (!admission) break;
      }
      if (signal.aborted) {
        await admission.reservation.release();
        return { end: ended(tally, "canceled") };
      }
      tally.attempts++;
      tally.last = target;
      const result = await callOnce(ctx, plan, id, admission, signal, delta);
      const usage = result.ok ? result.answer.usage : result.usage;
      tally.inputTokens += usage.inputTokens;
      tally.outputTokens += usage.outputTokens;
      if (result.ok) return { end: succeeded(tally, result.answer), answer: result.answer };
      failure = result.failure;
      if (failure.code === "ai.run_canceled" || signal.aborted) return { end: ended(tally, "canceled") };
      if (sent !== "" || failure.code === "ai.stream_interrupted") {
        const text = failure.options.partial?.text || sent;
        return { end: { ...ended(tally, "failed", failure), output: { text } } };
      }
      if (!failure.options.retryable || retry >= target.provider.maxRetries) break;
      if (!(await pause(backoffMs(ctx, retry, failure), signal))) return { end: ended(tally, "canceled") };
    }
  }
  if (failure) return { end: ended(tally, "failed", failure) };
  const none = { code: "ai.provider_unavailable", detail: "Every model's provider refused the call: breakers open." };
  return { end: ended(tally, "failed", none) };
}

/** The wait before retry `retry` (0-based): PF_AI_RETRY_BASE_MS doubling, or the provider's Retry-After; capped. */
function backoffMs(ctx: AiContext, retry: number, failure: ProviderFailure): number {
  const { retryBaseMs, retryMaxMs } = ctx.settings;
  return Math.min(failure.options.retryAfterMs ?? retryBaseMs * 2 ** retry, retryMaxMs);
}

function ended(
  tally: Tally,
  state: RunEnd["state"],
  failure?: { code: string; message?: string; detail?: string },
): RunEnd {
  return {
    ...bareEnd(state),
    provider: tally.last?.provider.key ?? "",
    model: tally.last?.model.model ?? "",
    inputTokens: tally.inputTokens,
    outputTokens: tally.outputTokens,
    attempts: tally.attempts,
    failureCode: state === "failed" ? (failure?.code ?? "") : "",
    failureDetail: state === "failed" ? (failure?.detail ?? failure?.message ?? "") : "",
  };
}

function succeeded(tally: Tally, answer: ProviderAnswer): RunEnd {
  return {
    ...ended(tally, "succeeded"),
    stub: answer.stub,
    output: answerOutput(answer),
    citations: answer.citations,
  };
}

/** What an answer produced, as a run stores it. */
export function answerOutput(answer: ProviderAnswer): RunEnd["output"] {
  return { text: answer.text, labels: answer.labels, fields: answer.fields, embeddings: answer.embeddings };
}
