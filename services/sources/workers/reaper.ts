import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { SourcesContext } from "../context.js";
import { lapsedRun, lapsedRuns } from "../db/runs.js";
import { sourceByKey } from "../db/sources.js";
import { finishRun } from "./apply.js";

const BATCH = 100;

/**
 * Ends every running run whose lease lapsed (its worker died mid-fetch, hit a bug, or could not reach the database
 * for a whole lease) as failed/abandoned, each in its own transaction, so no run stays running for ever. A worker
 * that comes back later finds its run ended and applies nothing. Answers how many were ended.
 */
export async function reapLapsed(ctx: SourcesContext): Promise<number> {
  const at = ctx.clock.now();
  const lapsed = await lapsedRuns(ctx.orm.em.fork(), at, BATCH);
  let ended = 0;
  for (const { id, sourceKey } of lapsed) {
    ended += await ctx.transaction(async (em) => {
      // The lock order of a run's end: its source, then the run.
      const source = await sourceByKey(em, sourceKey, true).catch(() => undefined);
      const run = source && (await lapsedRun(em, id, at));
      if (!source || !run) return 0;
      await finishRun(
        em,
        run,
        source,
        {
          state: "failed",
          failureClass: "abandoned",
          // What the reaper knows: the worker did not end the run in time, not why.
          detail: "Its lease lapsed: the worker running this fetch stopped, failed, or lost the database meanwhile.",
        },
        at,
      );
      return 1;
    });
  }
  return ended;
}

/** The reaper as a background job: one instance at a time, every PF_SOURCES_REAPER_EVERY_MS. */
export const reaper: Worker<SourcesContext> = leasedJob<SourcesContext>(
  "sources.reaper",
  (ctx) => ({ everyMs: ctx.settings.reaperEveryMs, firstAfterMs: 1_000 }),
  async (ctx) => {
    while ((await reapLapsed(ctx)) === BATCH);
  },
);
