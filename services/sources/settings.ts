import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The sources service's own settings, read once from the environment (documented in README.md). */
export interface SourcesSettings {
  /** How often due sources get a scheduled run (PF_SOURCES_SCHEDULE_EVERY_MS, default 5000). */
  scheduleEveryMs: number;
  /** How often an instance's executor looks for queued runs (PF_SOURCES_EXECUTOR_EVERY_MS, default 1000). */
  executorEveryMs: number;
  /** Fetches one instance runs at once (PF_SOURCES_FETCHES_PER_INSTANCE, default 4). */
  fetchesPerInstance: number;
  /** How long a running run's lease lasts unless renewed (PF_SOURCES_RUN_LEASE_MS, default 60000). */
  runLeaseMs: number;
  /** How often runs whose lease lapsed are ended as abandoned (PF_SOURCES_REAPER_EVERY_MS, default 10000). */
  reaperEveryMs: number;
  /** The least time between two fetches of one host (PF_SOURCES_HOST_GAP_MS, default and minimum 1000). */
  hostGapMs: number;
  /** Manual fetch triggers per source and minute (PF_SOURCES_TRIGGERS_PER_MINUTE, default 1). */
  fetchTriggersPerMinute: number;
  /** Requests adding items to one manual source an hour (PF_SOURCES_ITEM_REQUESTS_PER_HOUR, default 600). */
  itemRequestsPerHour: number;
}

export function sourcesSettings(config: Config): SourcesSettings {
  const env = config.env;
  return {
    scheduleEveryMs: wholeSetting(env, "PF_SOURCES_SCHEDULE_EVERY_MS", 5_000, 1),
    executorEveryMs: wholeSetting(env, "PF_SOURCES_EXECUTOR_EVERY_MS", 1_000, 1),
    fetchesPerInstance: wholeSetting(env, "PF_SOURCES_FETCHES_PER_INSTANCE", 4, 1),
    runLeaseMs: wholeSetting(env, "PF_SOURCES_RUN_LEASE_MS", 60_000, 3),
    reaperEveryMs: wholeSetting(env, "PF_SOURCES_REAPER_EVERY_MS", 10_000, 1),
    hostGapMs: wholeSetting(env, "PF_SOURCES_HOST_GAP_MS", 1_000, 1_000),
    fetchTriggersPerMinute: wholeSetting(env, "PF_SOURCES_TRIGGERS_PER_MINUTE", 1, 1),
    itemRequestsPerHour: wholeSetting(env, "PF_SOURCES_ITEM_REQUESTS_PER_HOUR", 600, 1),
  };
}
