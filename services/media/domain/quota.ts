import type { Quota } from "../../kit/quotas/quotas.js";
import { problem } from "../../kit/handler/problem.js";
import type { MediaSettings } from "../settings.js";

/** How far ahead of its bytes an upload reserves: one reservation per this many bytes, not per chunk. */
export const RESERVE_STEP = 4 * 1024 * 1024;

/** A namespace's two quotas (standing totals, kept by the kit's quotas), keyed by the namespace. */
export interface MediaQuotas {
  /** Bytes its files and open uploads hold. */
  bytes: Quota;
  /** Files it holds, open uploads counted. */
  files: Quota;
}

/** The quotas from the settings: an upload untouched past PF_MEDIA_SWEEP_AFTER_MS is abandoned, its holds expired. */
export function mediaQuotas(settings: MediaSettings): MediaQuotas {
  const quota = (unit: "bytes" | "files", limit: number): Quota => ({
    name: `media.${unit}`,
    limit,
    expireAfterMs: settings.sweepAfterMs,
    refused: (app) => quotaExceeded(app, unit, limit),
    expired: uploadAbandoned,
  });
  return { bytes: quota("bytes", settings.quotaBytes), files: quota("files", settings.quotaFiles) };
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
