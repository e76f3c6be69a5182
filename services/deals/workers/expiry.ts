import { leasedJob } from "../../kit/runtime/lease.js";
import type { Worker } from "../../kit/runtime/module.js";
import { dealsContext, type DealsContext } from "../context.js";
import { OfferRow } from "../db/entities.js";

/** Who expires an offer at its stated end. */
export const EXPIRY = "svc:deals";

/**
 * Offers with a stated end expire on their own, at that end (whenever the
 * worker comes by). An offer without one never does: an unknown expiry is
 * never assumed. Merged and disabled offers expire too, so undoing the merge
 * or the disable shows them as expired. Answers how many expired.
 */
export function expireDue(ctx: DealsContext): Promise<number> {
  return ctx.transaction(async (em) => {
    const at = ctx.clock.now();
    const due = await em.find(OfferRow, { expiredAt: null, expiresAt: { $ne: null, $lte: at } }, { limit: 500 });
    for (const row of due) Object.assign(row, { expiredAt: row.expiresAt, expiredBy: EXPIRY, updatedAt: at });
    await em.flush();
    return due.length;
  });
}

/** The expiry as a background job: one instance at a time, every PF_DEALS_EXPIRY_EVERY_MS. */
export const expiry: Worker = async (serviceContext) => {
  const ctx = await dealsContext(serviceContext);
  return leasedJob("deals.expiry", { everyMs: ctx.settings.expiryEveryMs, firstAfterMs: 1_000 }, async () => {
    while ((await expireDue(ctx)) === 500);
  })(serviceContext);
};
