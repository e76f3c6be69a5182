import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { AiContext } from "../context.js";
import { lapsedRuns } from "../db/runs.js";
import { bareEnd, endWithEvent } from "../engine/outcome.js";

/** Lapsed runs ended per pass. */
const BATCH = 100;

/**
 * Every run whose lease lapsed while it ran (its instance crashed or lost the database) fails with ai.run_lost and
 * its event; the instance, should it come back, finds it ended at its next renewal and stops.
 */
export async function reapLostRuns(ctx: AiContext): Promise<void> {
  for (;;) {
    const lapsed = await lapsedRuns(ctx.orm.em.fork(), ctx.clock.now(), BATCH);
    for (const id of lapsed) {
      const lost = bareEnd("failed", "ai.run_lost", "The instance running it was lost before it ended.");
      // Only a run still running on a lapsed lease: one that ended or was renewed meanwhile stays as it is.
      await ctx.transaction((em) => endWithEvent(em, id, lost, ctx.clock.now(), true));
      ctx.news.tell(id);
    }
    if (lapsed.length < BATCH) return;
  }
}

/** The reaper: one instance at a time, every PF_AI_LEASE_MS (a lost run waits at most about two leases). */
export const reaper: Worker<AiContext> = leasedJob<AiContext>(
  "ai.reaper",
  (ctx) => ({ everyMs: ctx.settings.leaseMs }),
  reapLostRuns,
);
