import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The job-run service's own settings, read once from the environment (documented in README.md). */
export interface RunSettings {
  /** How often queued jobs and pending cancels are looked at, besides each commit that makes some (PF_RUN_PLACEMENT_EVERY_MS, default 1000). */
  placementEveryMs: number;
  /** The longest wait between two dispatch tries of a queued job (PF_RUN_PLACEMENT_BACKOFF_MAX_MS, default 30000). */
  placementBackoffMaxMs: number;
  /** How often the reaper looks for jobs past their ttl (PF_RUN_REAPER_EVERY_MS, default 5000). */
  reaperEveryMs: number;
  /** How long past a job's ttl the reaper waits for the device's exit before asking bot (PF_RUN_REAPER_GRACE_MS, default 30000). */
  reaperGraceMs: number;
  /** Output bytes of one job kept for its stream; past it output is dropped (PF_RUN_STREAM_MAX_BYTES, default 1 MiB). */
  streamMaxBytes: number;
  /** Bytes of stdout, and of stderr, kept in a job's result (PF_RUN_RESULT_MAX_BYTES, default 64 KiB). */
  resultMaxBytes: number;
  /** How often an open stream reads its job again should a live wake be missed (PF_RUN_STREAM_RECHECK_MS, default 2000). */
  streamRecheckMs: number;
}

export function runSettings(config: Config): RunSettings {
  const env = config.env;
  return {
    placementEveryMs: wholeSetting(env, "PF_RUN_PLACEMENT_EVERY_MS", 1_000, 10),
    placementBackoffMaxMs: wholeSetting(env, "PF_RUN_PLACEMENT_BACKOFF_MAX_MS", 30_000, 10),
    reaperEveryMs: wholeSetting(env, "PF_RUN_REAPER_EVERY_MS", 5_000, 10),
    reaperGraceMs: wholeSetting(env, "PF_RUN_REAPER_GRACE_MS", 30_000, 0),
    streamMaxBytes: wholeSetting(env, "PF_RUN_STREAM_MAX_BYTES", 1024 * 1024, 1024),
    resultMaxBytes: wholeSetting(env, "PF_RUN_RESULT_MAX_BYTES", 64 * 1024, 1024),
    streamRecheckMs: wholeSetting(env, "PF_RUN_STREAM_RECHECK_MS", 2_000, 10),
  };
}
