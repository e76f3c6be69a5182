import type { ToolsContext } from "../../context.js";
import { expiryDone, type ExpiringJob } from "../../db/expiry.js";
import { forgetBlobs, heldBlobs } from "../../db/job-files.js";
import { resultBlobKey } from "./files.js";

/**
 * Deletes the blobs a job's file rows of one kind (or all) still name, outside any transaction, then records them
 * gone; a blob that cannot be deleted now leaves the rows naming it, for the sweep to try again. Answers whether all
 * went.
 */
export async function letGoOfBlobs(ctx: ToolsContext, jobId: string, kind?: "input" | "result"): Promise<boolean> {
  const keys = await heldBlobs(ctx.orm.em.fork(), jobId, kind);
  if (!(await deleted(ctx, keys))) return false;
  if (keys.length > 0) await ctx.transaction((em) => forgetBlobs(em, jobId, kind));
  return true;
}

/**
 * An expired job's files go: its inputs (unless a retry holds them), the result files its rows name, and whatever
 * its attempts wrote that no row names (an executor lost while storing its results): each attempt stores its files
 * as 1, 2, … in order and a store is whole or nothing, so its blobs end at the first number missing.
 */
export async function letGoOfExpired(ctx: ToolsContext, job: ExpiringJob): Promise<boolean> {
  for (let attempt = 1; attempt <= job.attempts; attempt++) {
    for (let n = 1; ; n++) {
      const key = resultBlobKey(job.id, attempt, n);
      const stored = await ctx.blobs.has(key).catch((error: unknown) => {
        ctx.logger.warn({ err: error, key }, "the blob store did not answer; the sweep tries again");
        return undefined;
      });
      if (stored === undefined) return false;
      if (!stored) break;
      if (!(await deleted(ctx, [key]))) return false;
    }
  }
  if (!(await letGoOfBlobs(ctx, job.id))) return false;
  await ctx.transaction((em) => expiryDone(em, job.id));
  return true;
}

/** Deletes blobs, logging what fails; answers whether all went. */
async function deleted(ctx: ToolsContext, keys: string[]): Promise<boolean> {
  let all = true;
  for (const key of keys)
    await ctx.blobs.delete(key).catch((error: unknown) => {
      all = false;
      ctx.logger.warn({ err: error, key }, "a job's blob was not deleted; the sweep tries again");
    });
  return all;
}
