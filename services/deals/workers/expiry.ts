import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { DealsContext } from "../context.js";
import { expireDueOffers } from "../db/offers.js";
import { offerDocuments } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";

/** Offers expired per transaction: a long backlog goes in batches, each pass until none is left. */
const BATCH = 500;

/**
 * Offers with a stated end expire on their own, at that end (whenever the
 * worker comes by). An offer without one never does: an unknown expiry is
 * never assumed. Merged and disabled offers expire too, so undoing the merge
 * or the disable shows them as expired. Answers how many expired.
 */
export function expireDue(ctx: DealsContext): Promise<number> {
  return ctx.transaction(async (em) => {
    const at = ctx.clock.now();
    const expired = await expireDueOffers(em, at, BATCH);
    await refreshSearchDocuments(em, offerDocuments, expired, at);
    return expired.length;
  });
}

/** The expiry as a background job: one instance at a time, every PF_DEALS_EXPIRY_EVERY_MS. */
export const expiry: Worker<DealsContext> = leasedJob<DealsContext>(
  "deals.expiry",
  (ctx) => ({ everyMs: ctx.settings.expiryEveryMs, firstAfterMs: 1_000 }),
  async (ctx) => {
    while ((await expireDue(ctx)) === BATCH);
  },
);
