import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The media service's settings (README, "Settings"). */
export interface MediaSettings {
  /** The largest file one upload may store, in bytes (PF_MEDIA_MAX_BYTES, default 100 MiB). */
  maxBytes: number;
  /** The bytes an app namespace holds at most, its files' and its open uploads' (PF_MEDIA_QUOTA_BYTES, 10 GiB). */
  quotaBytes: number;
  /** The files an app namespace holds at most, open uploads counted (PF_MEDIA_QUOTA_FILES, 100000). */
  quotaFiles: number;
  /** Uploads one app (or another caller that is not a service) has open at once (PF_MEDIA_OPEN_UPLOADS, 8). */
  openUploads: number;
  /** How often the sweep of abandoned uploads runs (PF_MEDIA_SWEEP_EVERY_MS, 10 minutes). */
  sweepEveryMs: number;
  /** An upload untouched this long is abandoned (a crash mid-upload) and swept (PF_MEDIA_SWEEP_AFTER_MS, 2 hours). */
  sweepAfterMs: number;
}

export function mediaSettings(config: Config): MediaSettings {
  const env = config.env;
  return {
    maxBytes: wholeSetting(env, "PF_MEDIA_MAX_BYTES", 100 * 1024 * 1024, 1),
    quotaBytes: wholeSetting(env, "PF_MEDIA_QUOTA_BYTES", 10 * 1024 * 1024 * 1024, 0),
    quotaFiles: wholeSetting(env, "PF_MEDIA_QUOTA_FILES", 100_000, 0),
    openUploads: wholeSetting(env, "PF_MEDIA_OPEN_UPLOADS", 8, 1),
    sweepEveryMs: wholeSetting(env, "PF_MEDIA_SWEEP_EVERY_MS", 10 * 60_000, 1),
    sweepAfterMs: wholeSetting(env, "PF_MEDIA_SWEEP_AFTER_MS", 2 * 3_600_000, 0),
  };
}
