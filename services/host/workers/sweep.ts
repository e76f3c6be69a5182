import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { HostContext } from "../context.js";
import { claimBlobs, deleteBlobRows, sweepableBlobs } from "../db/blobs.js";
import { abandonedDeploys, failDeploy } from "../db/deploys.js";
import { hostSubjects, recordHostEvent } from "../events.js";

const BATCH = 100;
const UNFINISHED = "the upload did not finish";

/**
 * What uploads left behind, once older than PF_HOST_BLOB_GRACE_MS (longer than any upload): deploys still
 * validating (the process that streamed them is gone) fail; blobs no deploy file names (a refused or cut-off upload's,
 * a deleted deploy's) are deleted, the object first and then its row, so a pass cut off finds the row again next time.
 * Each batch of blobs stays locked while its objects go: an upload touching one of them waits, then puts it anew.
 */
export async function sweepUploads(ctx: HostContext): Promise<void> {
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.blobGraceMs);
  for (let left = await abandonedDeploys(ctx.orm.em.fork(), before, BATCH); left.length > 0;) {
    for (const deploy of left)
      await ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const line = { level: "error" as const, path: "", rule: "" as const, message: UNFINISHED };
        if (await failDeploy(em, deploy.id, UNFINISHED, [line], at))
          await recordHostEvent(em, hostSubjects.deployFailed, {
            projectId: deploy.projectId,
            siteId: deploy.siteId,
            deployId: deploy.id,
            actor: `svc:${ctx.key}`,
            at,
          });
      });
    left = left.length < BATCH ? [] : await abandonedDeploys(ctx.orm.em.fork(), before, BATCH);
  }
  await ctx.blobs.sweepUnfinished(before);
  for (let found = await sweepableBlobs(ctx.orm.em.fork(), before, BATCH); found.length > 0;) {
    await ctx.transaction(async (em) => {
      const claimed = await claimBlobs(em, found, before);
      for (const digest of claimed) await ctx.blobs.delete(digest);
      await deleteBlobRows(em, claimed);
    });
    found = found.length < BATCH ? [] : await sweepableBlobs(ctx.orm.em.fork(), before, BATCH);
  }
}

/** The sweep as a background job: one instance at a time, every PF_HOST_SWEEP_EVERY_MS (the first pass too). */
export const sweep: Worker<HostContext> = leasedJob<HostContext>(
  "host.sweep",
  (ctx) => ({ everyMs: ctx.settings.sweepEveryMs, firstAfterMs: Math.min(ctx.settings.sweepEveryMs, 60_000) }),
  sweepUploads,
);
