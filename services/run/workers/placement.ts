import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { RunContext } from "../context.js";
import { claimQueued, pendingCancels } from "../db/jobs.js";
import { cancelAtBot, dispatch } from "../dispatch.js";
import { placementBackoffMs } from "../domain/jobs.js";

/** Jobs dispatched (and cancels told) side by side in one pass, per claim. */
const BATCH = 16;

/**
 * Placement (leased: one instance at a time), every PF_RUN_PLACEMENT_EVERY_MS and after each commit that queued a
 * job or asked a cancel: first the cancels bot must still hear of (a frame on its way must never start), then the
 * queued jobs due for a try, claimed in short transactions (FOR UPDATE SKIP LOCKED) and dispatched outside any.
 */
const passes = leasedJob<RunContext>(
  "run.placement",
  (ctx) => ({ everyMs: ctx.settings.placementEveryMs, wakeOn: "jobs" }),
  async (ctx) => {
    // A plain read: each cancel is settled in a transaction of its own on the job's lock (cancelAtBot).
    const cancels = await pendingCancels(ctx.orm.em.fork(), BATCH);
    await Promise.all(cancels.map((job) => cancelAtBot(ctx, job.id)));
    const backoff = (attempts: number) => placementBackoffMs(attempts, ctx.settings.placementBackoffMaxMs);
    // Each claim moves its jobs' next try on, so this ends when no job is due.
    for (;;) {
      const claimed = await ctx.transaction((em) => claimQueued(em, ctx.clock.now(), BATCH, backoff));
      await Promise.all(claimed.map((job) => dispatch(ctx, job)));
      if (claimed.length < BATCH) break;
    }
  },
);

/** Placement's passes; stopped, it also waits for the first tries of jobs submitted here (first-tries.ts). */
export const placement: Worker<RunContext> = async (ctx) => {
  const stop = await passes(ctx);
  return async () => {
    await stop();
    await ctx.firstTries.settled();
  };
};
