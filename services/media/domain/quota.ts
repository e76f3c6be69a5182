import { problem } from "../../kit/handler/problem.js";

/** How far ahead of its bytes an upload reserves: one reservation per this many bytes, not per chunk. */
export const RESERVE_STEP = 4 * 1024 * 1024;

/**
 * What an upload's next reservation takes of a namespace holding `used` of `quota` bytes, when it lacks `need`:
 * RESERVE_STEP ahead while the quota leaves that, else exactly `need` (never all that is left, which would refuse a
 * concurrent upload of the same namespace that fits); undefined when not even `need` fits.
 */
export function grantOf(used: number, quota: number, need: number): number | undefined {
  const left = quota - used;
  const ahead = Math.max(need, RESERVE_STEP);
  if (ahead <= left) return ahead;
  return need <= left ? need : undefined;
}

/** 413: the namespace holds its quota of bytes or files (`quota` says which, `limit` how many). */
export function quotaExceeded(app: string, quota: "bytes" | "files", limit: number) {
  return problem(
    413,
    "media.quota_exceeded",
    `The namespace ${app} would hold more than its quota of ${limit} ${quota}; nothing was stored.`,
    { quota, limit },
  );
}

/** 408: the sweep took the upload for abandoned (untouched past PF_MEDIA_SWEEP_AFTER_MS); nothing was stored. */
export function uploadAbandoned() {
  return problem(408, "request.timeout", "The upload went on too long without progress; nothing was stored.");
}
