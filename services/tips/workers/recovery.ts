import { leasedJob } from "../../kit/lease.js";
import type { Worker } from "../../kit/module.js";
import { tipsContext, type TipsContext } from "../context.js";
import { CheckoutRow } from "../db/entities.js";
import { applyIntent, pay } from "../payments.js";

/**
 * Completes checkouts left pending longer than PF_TIPS_RECOVERY_AFTER_MS (a
 * crash between recording and paying, billing out of reach, a billing event
 * not received): a credit payment is asked again with the same billing key
 * (billing applies it once), an intent is created again with its key or read
 * back from billing and its final state applied. Answers how many it looked at.
 */
export async function recoverPending(ctx: TipsContext): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.recoveryAfterMs);
  const em = ctx.orm.em.fork();
  const due = await em.find(CheckoutRow, { paymentState: "pending", updatedAt: { $lte: before } }, { orderBy: { updatedAt: "asc" }, limit: 100 });
  for (const row of due) {
    // Looked at now: intents the buyer never pays go to the back, so they never starve newer checkouts.
    await em.nativeUpdate(CheckoutRow, { id: row.id, paymentState: "pending" }, { updatedAt: ctx.clock.now() });
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
export const recovery: Worker = async (serviceContext) => {
  const ctx = tipsContext(serviceContext);
  return leasedJob("tips.recovery", { everyMs: ctx.settings.recoveryEveryMs, firstAfterMs: 1_000 }, async () => {
    await recoverPending(ctx);
  })(serviceContext);
};
