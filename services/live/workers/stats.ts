import { leasedJob } from "../../kit/service/lease.js";
import type { LiveContext } from "../context.js";
import { rollUp } from "../db/stats.js";
import { bucketOf } from "../domain/discovery.js";

/** One pass of the stats roll-up: samples live_channels and viewers into the current bucket, forgets old viewers. */
export async function rollUpStats(ctx: LiveContext): Promise<void> {
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - ctx.settings.viewerWindowMs);
  await ctx.transaction((em) => rollUp(em, bucketOf(now, ctx.settings.statsBucketMs), since));
}

/** The stats roll-up, one instance at a time, every PF_LIVE_STATS_EVERY_MS. */
export const statsRollUp = leasedJob<LiveContext>(
  "live.stats",
  (ctx) => ({ everyMs: ctx.settings.statsEveryMs }),
  rollUpStats,
);
