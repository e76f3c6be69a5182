import { newId } from "../../kit/handler/ids.js";
import type { AiContext } from "../context.js";
import { cachedAnswer } from "../db/cache.js";
import type { RunRow } from "../db/entities.js";
import { countCacheHit } from "../db/quotas.js";
import { insertRun, retryOfRun, runById } from "../db/runs.js";
import { cacheKeyOf } from "../domain/cache-key.js";
import { admit, targetName } from "./attempt.js";
import { answerOutput, launch, type FirstCall } from "./execute.js";
import { bareEnd, endWithEvent } from "./outcome.js";
import { unavailable, type Plan, type Target } from "./plan.js";

export interface StartOptions {
  /** The run this one retries (its unique index makes a second retry answer the first). */
  retryOf: string | null;
  noCache: boolean;
  /** A chat stream's pieces of text; streams never use the cache. */
  onDelta?: (text: string) => void;
}

/**
 * Starts a planned run and answers its row: a cache hit ends at once (no provider call, no tokens); otherwise the
 * first call is admitted before the run exists, so the request itself is refused when nothing could be called
 * (503 ai.provider_unavailable: every breaker open) or the quotas do not fit (429 ai.quota_exceeded): no run is
 * kept then. The run then executes in the background.
 */
export async function startRun(ctx: AiContext, plan: Plan, options: StartOptions): Promise<RunRow> {
  const id = newId("air");
  const useCache = !options.noCache && !options.onDelta;
  const cacheKey = useCache ? keyOf(plan, plan.targets[0]!) : undefined;
  if (cacheKey !== undefined) {
    const hit = await cachedAnswer(ctx, cacheKey);
    if (hit) return cacheHit(ctx, plan, id, options.retryOf, hit);
  }
  const first = await firstCall(ctx, plan, id);
  let inserted: boolean;
  try {
    inserted = await ctx.transaction((em) => insertRun(em, newRun(ctx, plan, id, options.retryOf, useCache)));
  } catch (error) {
    await first.admission.reservation.release();
    throw error;
  }
  if (!inserted) {
    await first.admission.reservation.release();
    return (await retryOfRun(ctx.orm.em.fork(), options.retryOf!))!;
  }
  launch(ctx, plan, id, first, { cacheKey, onDelta: options.onDelta });
  return (await runById(ctx.orm.em.fork(), id))!;
}

/** The cache key of a plan's answer: its namespace, operation, first model, definition versions and inputs. */
function keyOf(plan: Plan, target: Target): string {
  return cacheKeyOf({
    namespace: plan.namespace,
    operation: plan.operation,
    provider: target.provider.key,
    model: target.model.model,
    definitions: plan.definitions,
    request: {
      instruction: plan.instruction,
      input: plan.input,
      temperature: plan.temperature ?? null,
      maxOutputTokens: target.maxOutputTokens,
    },
  });
}

/** The first target the breakers let through, its quotas reserved; none: 503. */
async function firstCall(ctx: AiContext, plan: Plan, id: string): Promise<FirstCall> {
  for (const [index, target] of plan.targets.entries()) {
    const admission = await admit(ctx, plan, id, target);
    if (admission) return { index, admission };
  }
  throw unavailable(plan.operation);
}

/** A cache hit: counted on the quotas as a request without tokens, the run started and succeeded at once. */
async function cacheHit(
  ctx: AiContext,
  plan: Plan,
  id: string,
  retryOf: string | null,
  answer: Awaited<ReturnType<typeof cachedAnswer>> & object,
): Promise<RunRow> {
  const target = plan.targets[0]!;
  await countCacheHit(ctx, { namespace: plan.namespace, caller: plan.caller, model: targetName(target) });
  const row = await ctx.transaction(async (em) => {
    if (!(await insertRun(em, newRun(ctx, plan, id, retryOf, true)))) return retryOfRun(em, retryOf!);
    return endWithEvent(
      em,
      id,
      {
        ...bareEnd("succeeded"),
        provider: target.provider.key,
        model: target.model.model,
        stub: answer.stub,
        cacheHit: true,
        output: answerOutput(answer),
        citations: answer.citations,
      },
      ctx.clock.now(),
    );
  });
  ctx.news.tell(id);
  return row!;
}

function newRun(ctx: AiContext, plan: Plan, id: string, retryOf: string | null, cacheLookup: boolean) {
  const at = ctx.clock.now();
  return {
    id,
    operation: plan.kind,
    workflow: plan.workflow,
    workflowVersion: plan.workflowVersion,
    namespace: plan.namespace,
    caller: plan.caller,
    request: plan.request,
    cacheLookup,
    retryOf,
    leaseUntil: new Date(at.getTime() + ctx.settings.leaseMs),
    at,
  };
}
