import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { ToolsContext } from "../context.js";
import { endJob, heldJob, lapsedJobs, requeueJob, type Attempt } from "../db/job-runs.js";

/** Lapsed jobs taken per pass. */
const BATCH = 100;

/**
 * A job whose executor is gone (its lease lapsed: the process crashed or lost the database) goes back to the queue,
 * or fails with tools.executor.lost once it was started PF_TOOLS_MAX_ATTEMPTS times; the attempt it had can no
 * longer end it. Answers whether the job was still that attempt's.
 */
export async function reap(ctx: ToolsContext, lapsed: Attempt): Promise<boolean> {
  const at = ctx.clock.now();
  const reaped = await ctx.transaction(async (em) => {
    const row = await heldJob(em, lapsed);
    if (!row || !row.leaseUntil || row.leaseUntil >= at) return false;
    if (row.attempt < ctx.settings.maxAttempts)
      await requeueJob(em, row, "The executor running the job was lost; it starts again.", at);
    else
      await endJob(
        em,
        row,
        {
          state: "failed",
          code: "tools.executor.lost",
          detail: `The executor running the job was lost ${row.attempt} times; it was not started again.`,
          expiresAt: new Date(at.getTime() + ctx.settings.resultTtlMs),
        },
        at,
      );
    return true;
  });
  if (reaped) ctx.news.tell(lapsed.id);
  return reaped;
}

/** Every lapsed job of the catalogue's job tools (whichever instance ran them). */
export async function reapLapsed(ctx: ToolsContext): Promise<void> {
  const families = [
    ...new Set(ctx.catalogue.tools.filter((tool) => tool.execution === "job").map((tool) => tool.family)),
  ];
  if (families.length === 0) return;
  for (;;) {
    const lapsed = await lapsedJobs(ctx.orm.em.fork(), families, ctx.clock.now(), BATCH);
    for (const attempt of lapsed) await reap(ctx, attempt);
    if (lapsed.length < BATCH) return;
  }
}

/** The reaper: one instance at a time, every PF_TOOLS_LEASE_MS (a lost executor's job waits at most two leases). */
export const reaper: Worker<ToolsContext> = leasedJob<ToolsContext>(
  "tools.reaper",
  (ctx) => ({ everyMs: ctx.settings.leaseMs }),
  reapLapsed,
);
