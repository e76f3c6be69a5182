import { leasedJob } from "../../kit/service/lease.js";
import type { TipsContext } from "../context.js";
import { dueCheckouts, markLookedAt } from "../db/checkouts.js";
import { applyIntent, pay } from "../payments.js";

/** The longest a pending checkout waits between two looks of the recovery worker. */
export const RECOVERY_BACKOFF_MAX_MS = 60 * 60 * 1000;

/**
 * Completes checkouts left pending longer than PF_TIPS_RECOVERY_AFTER_MS (a
 * crash between recording and paying, billing out of reach, a billing event
 * not received): a credit payment is asked again with the same billing key
 * (billing applies it once), an intent is created again with its key or read
 * back from billing and its final state applied. Answers how many it looked at.
 */
export async function recoverPending(ctx: TipsContext): Promise<number> {
  const now = ctx.clock.now();
  const em = ctx.orm.em.fork();
  const before = new Date(now.getTime() - ctx.settings.recoveryAfterMs);
  const due = await dueCheckouts(em, before, now, RECOVERY_BACKOFF_MAX_MS);
  for (const row of due) {
    // Looked at now: it goes to the back and its next look backs off.
    await markLookedAt(em, row.id, ctx.clock.now());
    try {
      if (row.method === "intent" && row.intentId) {
        const { intent } = await ctx.billing.getIntent({ id: row.intentId });
        await applyIntent(ctx, row.id, intent!);
      } else {
        await pay(ctx, row.id);
      }
    } catch (error) {
      ctx.logger.warn({ err: error, checkout: row.id }, "pending checkout not completed; the next pass tries again");
    }
  }
  return due.length;
}

/** The recovery as a background job: one instance at a time, every PF_TIPS_RECOVERY_EVERY_MS. */
export const recovery = leasedJob<TipsContext>(
  "tips.recovery",
  (ctx) => ({ everyMs: ctx.settings.recoveryEveryMs, firstAfterMs: 1_000 }),
  async (ctx) => {
    await recoverPending(ctx);
  },
);
