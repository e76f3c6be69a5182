import { leasedJob } from "../../kit/service/lease.js";
import type { BotContext } from "../context.js";
import { lostJobs, saveJobs } from "../db/jobs.js";
import { endJob, lost as lostExit } from "../endings.js";
import { dispatchEvent } from "../events.js";

/** Jobs ended per transaction. */
const BATCH = 100;

/**
 * The ttl backstop: a job bot holds whose device said nothing of its end by its ttl (from the device's receipt, the
 * stricter of the job's and the device's, or from the dispatch while the frame waited) and PF_BOT_LOST_GRACE_MS more
 * ends `lost`. Its device, should it still hold a link, is told to stop it.
 */
export async function endLostJobs(ctx: BotContext): Promise<number> {
  let ended = 0;
  for (;;) {
    const count = await ctx.transaction(async (em) => {
      const at = ctx.clock.now();
      const rows = await lostJobs(em, at, BATCH);
      for (const row of rows) {
        await endJob(em, row, lostExit("its device said nothing of it within its ttl"), at);
        await dispatchEvent(em, "bot.dispatch.cancel_requested", row, at);
      }
      await saveJobs(em);
      return rows.length;
    });
    ended += count;
    if (count < BATCH) return ended;
  }
}

/** Every PF_BOT_LOST_EVERY_MS, on one instance at a time. */
export const lostJobsBackstop = leasedJob<BotContext>(
  "bot.lost",
  (ctx) => ({ everyMs: ctx.settings.lostEveryMs }),
  async (ctx) => {
    await endLostJobs(ctx);
  },
);
