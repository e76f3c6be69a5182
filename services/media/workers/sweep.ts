import { leasedJob } from "../../kit/runtime/lease.js";
import type { Worker } from "../../kit/runtime/module.js";
import type { MediaContext } from "../context.js";
import { abandonedUploads, abandonUploads, addUsage, dropAbandoned, lockUsage } from "../db/usage.js";

/** Abandoned uploads removed per pass of the loop: a long backlog goes in batches. */
const BATCH = 100;

/**
 * What uploads cut off by a crash left, once untouched for PF_MEDIA_SWEEP_AFTER_MS (a live upload touches its row as
 * its bytes arrive): the store's unfinished puts (temporary files), then each abandoned upload's blob (stored before a
 * row that was never written) and its reservation. An upload is marked abandoned before its blob is removed, so it can
 * no longer settle into a row whose bytes are gone; a blob that cannot be removed now is tried again next pass.
 */
export async function sweepAbandoned(ctx: MediaContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.sweepAfterMs);
  await ctx.blobs.sweepUnfinished(before);
  await ctx.transaction((em) => abandonUploads(em, before));
  for (;;) {
    const batch = await ctx.transaction((em) => abandonedUploads(em, BATCH));
    for (const { key, app } of batch) {
      await ctx.blobs.delete(key);
      await ctx.transaction(async (em) => {
        await lockUsage(em, app);
        const reserved = await dropAbandoned(em, key);
        if (reserved !== undefined) await addUsage(em, app, -reserved, -1);
      });
    }
    if (batch.length < BATCH) return;
  }
}

/** The sweep as a background job: one instance at a time, every PF_MEDIA_SWEEP_EVERY_MS (the first pass too). */
export const sweep: Worker<MediaContext> = leasedJob<MediaContext>(
  "media.sweep",
  (ctx) => ({ everyMs: ctx.settings.sweepEveryMs, firstAfterMs: Math.min(ctx.settings.sweepEveryMs, 60_000) }),
  sweepAbandoned,
);
