import { randomUUID } from "node:crypto";
import { setTimeout as pause } from "node:timers/promises";
import { isDatabaseUnavailable } from "../../kit/db/unavailable.js";
import type { Worker } from "../../kit/service/module.js";
import { fetchSource, type FetchOutcome, type FetchTarget, type SourceKind } from "../fetch/fetch-source.js";
import type { SourcesContext } from "../context.js";
import type { SourceRow } from "../db/entities.js";
import { claimRun, renewRun, type ClaimedRun } from "../db/runs.js";
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

/** The longest pause between two attempts to apply an outcome while the database is unreachable. */
const APPLY_PAUSE_MAX_MS = 2_000;

/**
 * Applies a fetch's outcome, again after a pause (250 ms doubling to 2 s) while the database is unreachable, so the
 * run ends with what the fetch found, not abandoned once its lease (still renewed) lapses. Gives up, throwing, on any
 * other failure or once `stop` is aborted (a last attempt first).
 */
async function applyWhenReachable(
  ctx: SourcesContext,
  claimed: ClaimedRun,
  worker: string,
  outcome: FetchOutcome,
  at: Date,
  stop?: AbortSignal,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await applyOutcome(ctx, claimed, worker, outcome, at);
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || stop?.aborted) throw error;
      ctx.logger.warn({ err: error, run: claimed.id, attempt }, "database unreachable: the run's outcome waits for it");
      const ms = Math.min(250 * 2 ** (attempt - 1), APPLY_PAUSE_MAX_MS);
      await pause(ms, undefined, { signal: stop }).catch(() => undefined);
    }
  }
}

/**
 * Claims one queued run (skip locked, host politeness) and runs it: the fetch happens outside any transaction while
 * the run's lease is renewed, then its outcome is applied in one transaction (again while the database is
 * unreachable). `onClaim` lets the caller start another claimer; `stop` ends the waiting for the database. Answers
 * whether a run was claimed.
 */
export async function executeNext(
  ctx: SourcesContext,
  worker: string,
  { onClaim = () => {}, stop }: { onClaim?: () => void; stop?: AbortSignal } = {},
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
    await applyWhenReachable(ctx, claimed, worker, outcome, ctx.clock.now(), stop);
  } catch (error) {
    // A bug (fetchSource answers the source's faults), or the database still unreachable as the executor stops: let
    // the lease lapse now (if the database takes it), so the reaper ends the run.
    ctx.logger.error({ err: error, run: claimed.id }, "fetch run not ended; the reaper ends it as abandoned");
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
 * PF_SOURCES_EXECUTOR_EVERY_MS a claimer drains the queue, and each claim starts another, up to
 * PF_SOURCES_FETCHES_PER_INSTANCE fetching at once. A tick starts a claimer whenever fewer are running: a claimer
 * busy with a fetch that hangs (up to PF_FETCH_TIMEOUT_MS) must not hold back runs queued meanwhile.
 */
export const executor: Worker<SourcesContext> = async (ctx) => {
  const worker = randomUUID();
  const claimers = new Set<Promise<void>>();
  const stopping = new AbortController();
  const spawn = () => {
    if (stopping.signal.aborted || claimers.size >= ctx.settings.fetchesPerInstance) return;
    const claimer: Promise<void> = (async () => {
      while (!stopping.signal.aborted && (await executeNext(ctx, worker, { onClaim: spawn, stop: stopping.signal })));
    })()
      .catch((error: unknown) => ctx.logger.error({ err: error }, "fetch executor failed; the next tick tries again"))
      .finally(() => claimers.delete(claimer));
    claimers.add(claimer);
  };
  const timer = setInterval(spawn, ctx.settings.executorEveryMs);
  return async () => {
    stopping.abort();
    clearInterval(timer);
    await Promise.all(claimers);
  };
};
