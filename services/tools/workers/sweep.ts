import { expireReservations } from "../../kit/quotas/quotas.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { ToolsContext } from "../context.js";
import { expireDue } from "../db/expiry.js";
import { letGoOfExpired } from "../domain/jobs/blobs.js";
import { toolsQuotas } from "../domain/quota.js";

/** Jobs expired per transaction. */
const BATCH = 100;
/** A blob put unfinished this long (a crashed upload's or executor's) is removed: no live put pauses that long. */
const UNFINISHED_AFTER_MS = 3_600_000;

/**
 * The expiry sweep: each job whose files are due to go (an unreferenced result past PF_TOOLS_RESULT_TTL_MS, a
 * failed job's inputs no retry asked for in that time, a canceled job's) is marked expired in a transaction first
 * (never served nor retried again: 410), then its blobs are deleted outside any transaction; a deletion that fails
 * leaves the job for the next pass. Then the store's unfinished puts, and quota reservations a crashed process left.
 */
export async function sweepJobs(ctx: ToolsContext): Promise<void> {
  const at = ctx.clock.now();
  for (;;) {
    const due = await ctx.transaction((em) => expireDue(em, at, BATCH));
    let all = true;
    for (const job of due) {
      ctx.news.tell(job.id);
      all = (await letGoOfExpired(ctx, job)) && all;
    }
    // A batch that could not all go is tried again next pass, not at once.
    if (due.length < BATCH || !all) break;
  }
  await ctx.blobs.sweepUnfinished(new Date(at.getTime() - UNFINISHED_AFTER_MS));
  await expireReservations(ctx, toolsQuotas(ctx.settings));
}

/** The sweep as a background job: one instance at a time, every PF_TOOLS_SWEEP_EVERY_MS (the first pass too). */
export const sweep: Worker<ToolsContext> = leasedJob<ToolsContext>(
  "tools.sweep",
  (ctx) => ({ everyMs: ctx.settings.sweepEveryMs, firstAfterMs: Math.min(ctx.settings.sweepEveryMs, 60_000) }),
  sweepJobs,
);
