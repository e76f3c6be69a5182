import { leasedJob } from "../../kit/service/lease.js";
import type { RunContext } from "../context.js";
import { overdueJobs } from "../db/jobs.js";
import { dropExpiredTickets } from "../db/stream.js";
import { reap } from "../dispatch.js";

/** Overdue jobs asked about per pass. */
const BATCH = 100;
/** How long tickets are kept past their expiry (they open nothing by then). */
const TICKETS_KEPT_MS = 24 * 60 * 60 * 1000;

/**
 * The reaper (leased), every PF_RUN_REAPER_EVERY_MS: jobs placed or running whose device reported no end within
 * their ttl plus PF_RUN_REAPER_GRACE_MS are asked about at bot, then ended as bot says or `lost`; expired stream
 * tickets are forgotten after a day.
 */
export const reaper = leasedJob<RunContext>(
  "run.reaper",
  (ctx) => ({ everyMs: ctx.settings.reaperEveryMs }),
  async (ctx) => {
    const at = ctx.clock.now();
    const overdue = await ctx.transaction((em) => overdueJobs(em, at, ctx.settings.reaperGraceMs, BATCH));
    for (const id of overdue) await reap(ctx, id);
    await ctx.transaction((em) => dropExpiredTickets(em, new Date(at.getTime() - TICKETS_KEPT_MS)));
  },
);
