import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The live service's own settings, read once from the environment (documented in README.md). */
export interface LiveSettings {
  /** A viewer counts while they read a live stream's playback within this window (PF_LIVE_VIEWER_WINDOW_SECONDS, 60). */
  viewerWindowMs: number;
  /** How often an instance writes the viewers it saw, as one batch (PF_LIVE_VIEWERS_FLUSH_MS, 5000). */
  viewersFlushMs: number;
  /** How often the stats roll-up samples the metrics (PF_LIVE_STATS_EVERY_MS, 60000). */
  statsEveryMs: number;
  /** The length of a stats series bucket (PF_LIVE_STATS_BUCKET_SECONDS, 300). */
  statsBucketMs: number;
  /** One featured rotation slot, unless staff set another (PF_LIVE_FEATURED_PERIOD_SECONDS, 3600). */
  featuredPeriodMs: number;
  /** Channels one featured slot shows (PF_LIVE_FEATURED_COUNT, 3). */
  featuredCount: number;
  /** Cache-Control max-age of discovery answers (PF_LIVE_DISCOVERY_MAX_AGE_SECONDS, 15). */
  discoveryMaxAgeSeconds: number;
}

export function liveSettings(config: Config): LiveSettings {
  const whole = (name: string, fallback: number, min = 1) => wholeSetting(config.env, name, fallback, min);
  return {
    viewerWindowMs: whole("PF_LIVE_VIEWER_WINDOW_SECONDS", 60) * 1000,
    viewersFlushMs: whole("PF_LIVE_VIEWERS_FLUSH_MS", 5000, 10),
    statsEveryMs: whole("PF_LIVE_STATS_EVERY_MS", 60_000, 10),
    statsBucketMs: whole("PF_LIVE_STATS_BUCKET_SECONDS", 300) * 1000,
    featuredPeriodMs: whole("PF_LIVE_FEATURED_PERIOD_SECONDS", 3600, 60) * 1000,
    featuredCount: whole("PF_LIVE_FEATURED_COUNT", 3),
    discoveryMaxAgeSeconds: whole("PF_LIVE_DISCOVERY_MAX_AGE_SECONDS", 15, 0),
  };
}
