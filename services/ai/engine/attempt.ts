import type { AiContext } from "../context.js";
import { admitCall, recordCallOutcome } from "../db/breakers.js";
import { reserveCall, type CallReservation } from "../db/quotas.js";
import { logRequest, type CallOutcome } from "../db/request-logs.js";
import { adapterOf } from "../providers/index.js";
import { ProviderFailure, type FailureCode, type ProviderAnswer } from "../providers/provider.js";
import type { Plan, Target } from "./plan.js";

/** A call allowed to go: the breaker let it (`trial`: the one half-open call) and the quotas hold its share. */
export interface Admission {
  target: Target;
  trial: boolean;
  reservation: CallReservation;
}

/** One call's result: the answer, or the failure with what it cost. */
export type CallResult =
  | { ok: true; answer: ProviderAnswer }
  | { ok: false; failure: ProviderFailure; usage: { inputTokens: number; outputTokens: number } };

const OUTCOMES: Record<FailureCode, CallOutcome> = {
  "ai.provider_timeout": "timeout",
  "ai.provider_rate_limited": "rate_limited",
  "ai.provider_failed": "error",
  "ai.provider_refused": "error",
  "ai.stream_interrupted": "interrupted",
  "ai.run_canceled": "canceled",
};

/** `provider/model`: how quotas, logs and runs name a target. */
export const targetName = (target: Target): string => `${target.provider.key}/${target.model.model}`;

/**
 * Takes the call's share of the quotas, then asks the target's breaker. Quotas first: a quota that does not fit
 * throws its 429 ai.quota_exceeded, counting nothing, before the breaker could hand this call its one half-open
 * trial (which nobody would then make). A refusing breaker gives the share back, is logged (outcome `refused`) and
 * answers undefined: the run moves on.
 */
export async function admit(ctx: AiContext, plan: Plan, runId: string, target: Target): Promise<Admission | undefined> {
  const subjects = { namespace: plan.namespace, caller: plan.caller, model: targetName(target) };
  const reservation = await reserveCall(ctx, subjects, plan.estimate);
  const breaker = await admitCall(ctx, target.provider.key).catch(async (error: unknown) => {
    await reservation.release();
    throw error;
  });
  if (breaker !== "refused") return { target, trial: breaker === "trial", reservation };
  await reservation.release();
  await ctx.transaction((em) =>
    logRequest(em, {
      ...logFacts(plan, runId, target),
      outcome: "refused",
      httpStatus: 0,
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: 0,
      errorCode: "ai.provider_unavailable",
      at: ctx.clock.now(),
    }),
  );
  return undefined;
}

/**
 * One call to the admitted target: exactly one adapter call, logged, its quota settled with the tokens it cost
 * and its outcome counted on the breaker (a failure only when it is the provider's: 5xx, timeouts, broken streams).
 */
export async function callOnce(
  ctx: AiContext,
  plan: Plan,
  runId: string,
  { target, trial, reservation }: Admission,
  signal: AbortSignal,
  onDelta?: (text: string) => void,
): Promise<CallResult> {
  const started = performance.now();
  const at = ctx.clock.now();
  const { provider, model } = target;
  const adapter = adapterOf({
    key: provider.key,
    kind: provider.kind as "openai" | "anthropic" | "local",
    baseUrl: provider.baseUrl,
    apiKey: provider.apiKeyEnv === "" ? "" : (ctx.settings.env[provider.apiKeyEnv] ?? ""),
  });
  let result: CallResult;
  try {
    const answer = await adapter.call({
      operation: plan.operation,
      model: model.model,
      instruction: plan.instruction,
      messages: plan.input.messages,
      task: plan.input,
      maxOutputTokens: target.maxOutputTokens,
      temperature: plan.temperature,
      timeoutMs: provider.timeoutMs,
      signal,
      onDelta,
    });
    result = { ok: true, answer };
  } catch (error) {
    const failure =
      error instanceof ProviderFailure
        ? error
        : new ProviderFailure(signal.aborted ? "ai.run_canceled" : "ai.provider_failed", String(error), {
            retryable: false,
            breaker: false,
          });
    result = { ok: false, failure, usage: failure.options.partial?.usage ?? { inputTokens: 0, outputTokens: 0 } };
  }
  const usage = result.ok ? result.answer.usage : result.usage;
  await ctx.transaction((em) =>
    logRequest(em, {
      ...logFacts(plan, runId, target),
      outcome: result.ok ? "ok" : OUTCOMES[result.failure.code],
      httpStatus: (result.ok ? result.answer.httpStatus : result.failure.options.httpStatus) ?? 0,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      latencyMs: Math.round(performance.now() - started),
      errorCode: result.ok ? "" : result.failure.code,
      at,
    }),
  );
  await reservation.settle(usage.inputTokens + usage.outputTokens);
  // A trial the provider answered, even with a 429 or a 4xx, shows it is back: only its own failures count.
  const answered = result.ok || (trial && result.failure.code !== "ai.run_canceled" && !result.failure.options.breaker);
  if (answered) await recordCallOutcome(ctx, provider.key, "success");
  else if (!result.ok && result.failure.options.breaker) await recordCallOutcome(ctx, provider.key, "failure");
  return result;
}

function logFacts(plan: Plan, runId: string, target: Target) {
  return {
    runId,
    caller: plan.caller,
    namespace: plan.namespace,
    operation: plan.operation,
    provider: target.provider.key,
    model: target.model.model,
  };
}
