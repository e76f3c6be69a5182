import { expireReservations } from "../../kit/quotas/quotas.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { MediaContext } from "../context.js";

/**
 * What uploads cut off by a crash left, once untouched for PF_MEDIA_SWEEP_AFTER_MS (a live upload touches its
 * reservations as its bytes arrive): the store's unfinished puts (temporary files), then each abandoned upload's blob
 * (stored before a row that was never written) and its reservations. They are expired before the blob is removed,
 * so the upload can no longer settle into a row whose bytes are gone; a blob that cannot be removed now is tried
 * again next pass.
 */
export async function sweepAbandoned(ctx: MediaContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.sweepAfterMs);
  await ctx.blobs.sweepUnfinished(before);
  await expireReservations(ctx, [ctx.quotas.files, ctx.quotas.bytes], (key) => ctx.blobs.delete(key));
}

/** The sweep as a background job: one instance at a time, every PF_MEDIA_SWEEP_EVERY_MS (the first pass too). */
export const sweep: Worker<MediaContext> = leasedJob<MediaContext>(
  "media.sweep",
  (ctx) => ({ everyMs: ctx.settings.sweepEveryMs, firstAfterMs: Math.min(ctx.settings.sweepEveryMs, 60_000) }),
  sweepAbandoned,
);
