import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The quota classes a tool's cost is counted in, per caller per hour. */
export const QUOTA_CLASSES = ["light", "file", "probe"] as const;
export type QuotaClass = (typeof QUOTA_CLASSES)[number];

/** The tools service's own settings, read once from the environment (documented in README.md). */
export interface ToolsSettings {
  /** The longest wait_ms a run may ask for (PF_TOOLS_MAX_WAIT_MS, default 8000: below the call deadline). */
  maxWaitMs: number;
  /** How long a result stays without a reference once its job ended (PF_TOOLS_RESULT_TTL_MS, default 24 h). */
  resultTtlMs: number;
  /** How often expired results are swept (PF_TOOLS_SWEEP_EVERY_MS, default 600000). */
  sweepEveryMs: number;
  /** How long an executor holds a running job between renewals (PF_TOOLS_LEASE_MS, default 30000). */
  leaseMs: number;
  /** How many times a job is started before an executor lost mid-job fails it (PF_TOOLS_MAX_ATTEMPTS, default 3). */
  maxAttempts: number;
  /** Jobs one process runs at once per family (PF_TOOLS_JOBS_PER_FAMILY, default 2). */
  jobsPerFamily: number;
  /** Each quota class's units per caller per hour (PF_TOOLS_QUOTA_LIGHT 1000, _FILE 100, _PROBE 300). */
  quotas: Record<QuotaClass, number>;
  /** The largest input file of a job (PF_TOOLS_MAX_FILE_BYTES, default 50 MiB) and files per job (8). */
  maxFileBytes: number;
  /** The FFmpeg binary (PF_TOOLS_FFMPEG, default `ffmpeg` on the PATH); its absence makes audio.process unavailable. */
  ffmpeg: string;
}

export function toolsSettings(config: Config): ToolsSettings {
  const env = config.env;
  return {
    maxWaitMs: wholeSetting(env, "PF_TOOLS_MAX_WAIT_MS", 8_000, 0),
    resultTtlMs: wholeSetting(env, "PF_TOOLS_RESULT_TTL_MS", 24 * 3600_000, 1),
    sweepEveryMs: wholeSetting(env, "PF_TOOLS_SWEEP_EVERY_MS", 600_000, 10),
    leaseMs: wholeSetting(env, "PF_TOOLS_LEASE_MS", 30_000, 100),
    maxAttempts: wholeSetting(env, "PF_TOOLS_MAX_ATTEMPTS", 3, 1),
    jobsPerFamily: wholeSetting(env, "PF_TOOLS_JOBS_PER_FAMILY", 2, 1),
    quotas: {
      light: wholeSetting(env, "PF_TOOLS_QUOTA_LIGHT", 1_000, 0),
      file: wholeSetting(env, "PF_TOOLS_QUOTA_FILE", 100, 0),
      probe: wholeSetting(env, "PF_TOOLS_QUOTA_PROBE", 300, 0),
    },
    maxFileBytes: wholeSetting(env, "PF_TOOLS_MAX_FILE_BYTES", 50 * 1024 ** 2, 1),
    ffmpeg: (env.PF_TOOLS_FFMPEG ?? "").trim() || "ffmpeg",
  };
}
