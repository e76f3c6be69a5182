import { randomUUID } from "node:crypto";
import type { Worker } from "../../kit/runtime/module.js";
import { fetchSource, type FetchTarget, type SourceKind } from "../fetch/fetch-source.js";
import type { SourcesContext } from "../context.js";
import type { SourceRow } from "../db/entities.js";
import { claimRun, renewRun } from "../db/runs.js";
import { sourceByKey } from "../db/sources.js";
import type { Scheme } from "../domain/sources.js";
import { applyOutcome } from "./apply.js";

/** What to fetch for a source: its URL, kind, credential by name and the validators of its last success. */
function targetOf(source: SourceRow): FetchTarget {
  return {
    kind: source.kind as SourceKind,
    url: source.url ?? "",
    credential: source.credentialVariable
      ? {
          variable: source.credentialVariable,
          scheme: source.credentialScheme as Scheme,
          ...(source.credentialHeader ? { header: source.credentialHeader } : {}),
        }
      : undefined,
    etag: source.etag ?? undefined,
    lastModified: source.lastModified ?? undefined,
  };
}

/**
 * Claims one queued run (skip locked, host politeness) and runs it: the fetch happens outside any transaction while
 * the run's lease is renewed, then its outcome is applied in one transaction. `onClaim` lets the caller start
 * another claimer. Answers whether a run was claimed.
 */
export async function executeNext(
  ctx: SourcesContext,
  worker: string,
  onClaim: () => void = () => {},
): Promise<boolean> {
  const { runLeaseMs, hostGapMs } = ctx.settings;
  const claimed = await ctx.transaction((em) => claimRun(em, worker, ctx.clock.now(), runLeaseMs, hostGapMs));
  if (!claimed) return false;
  onClaim();
  const renewal = setInterval(() => {
    const until = new Date(ctx.clock.now().getTime() + runLeaseMs);
    void ctx
      .transaction((em) => renewRun(em, claimed.id, worker, until))
      .catch((error: unknown) => ctx.logger.warn({ err: error, run: claimed.id }, "run lease renewal failed"));
  }, runLeaseMs / 3);
  try {
    const source = await sourceByKey(ctx.orm.em.fork(), claimed.sourceKey);
    const outcome = await fetchSource(targetOf(source), ctx.config.env, ctx.outbound);
    clearInterval(renewal);
    await applyOutcome(ctx, claimed, worker, outcome, ctx.clock.now());
  } catch (error) {
    // Not the source's fault (fetchSource answers those): let the lease lapse now, so the reaper ends the run.
    ctx.logger.error({ err: error, run: claimed.id }, "fetch run failed; the reaper ends it as abandoned");
    await ctx.transaction((em) => renewRun(em, claimed.id, worker, ctx.clock.now())).catch(() => false);
  } finally {
    clearInterval(renewal);
  }
  return true;
}

/** Runs queued runs one after another until none can be claimed now (tests, and each claimer's loop). */
export async function executeQueued(ctx: SourcesContext, worker: string = randomUUID()): Promise<number> {
  let runs = 0;
  while (await executeNext(ctx, worker)) runs++;
  return runs;
}

/**
 * The executor: on every instance (runs are claimed skip locked, so instances share the queue), every
 * PF_SOURCES_EXECUTOR_EVERY_MS a claimer drains the queue; each claim starts another claimer, up to
 * PF_SOURCES_FETCHES_PER_INSTANCE fetching at once.
 */
export const executor: Worker<SourcesContext> = async (ctx) => {
  const worker = randomUUID();
  const claimers = new Set<Promise<void>>();
  let stopping = false;
  const spawn = () => {
    if (stopping || claimers.size >= ctx.settings.fetchesPerInstance) return;
    const claimer: Promise<void> = (async () => {
      while (!stopping && (await executeNext(ctx, worker, spawn)));
    })()
      .catch((error: unknown) => ctx.logger.error({ err: error }, "fetch executor failed; the next tick tries again"))
      .finally(() => claimers.delete(claimer));
    claimers.add(claimer);
  };
  const timer = setInterval(() => {
    if (claimers.size === 0) spawn();
  }, ctx.settings.executorEveryMs);
  return async () => {
    stopping = true;
    clearInterval(timer);
    await Promise.all(claimers);
  };
};
