import { qualified } from "../../kit/db/orm.js";
import { leasedJob } from "../../kit/runtime/lease.js";
import type { Worker } from "../../kit/runtime/module.js";
import { tipsContext, type TipsContext } from "../context.js";
import { CheckoutRow } from "../db/entities.js";
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
  const before = new Date(now.getTime() - ctx.settings.recoveryAfterMs);
  const em = ctx.orm.em.fork();
  // Backing off: a checkout is looked at again once as long has passed since the last look as it had been
  // pending then (at most RECOVERY_BACKOFF_MAX_MS), so intents the buyer never pays (billing keeps them
  // open) are asked about less and less and never crowd out a checkout a crash left behind.
  const ids = await em.getConnection().execute<{ id: string }[]>(
    `select id from ${qualified(em, "checkouts")}
      where payment_state = 'pending' and updated_at <= ?
        and updated_at <= ?::timestamptz - least(updated_at - created_at, ? * interval '1 millisecond')
      order by updated_at limit 100`,
    [before, now, RECOVERY_BACKOFF_MAX_MS],
    "all",
  );
  const due = ids.length === 0 ? [] : await em.find(CheckoutRow, { id: { $in: ids.map((row) => row.id) } }, { orderBy: { updatedAt: "asc" } });
  for (const row of due) {
    // Looked at now: it goes to the back and its next look backs off.
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
