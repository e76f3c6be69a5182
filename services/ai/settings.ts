import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The only environment variables a provider's API key may be read from: never another service's secret. */
export const SECRET_ENV_PREFIX = "PF_AI_";

/** The AI service's own settings, read once from the environment (documented in README.md). */
export interface AiSettings {
  /** The longest a run's call waits before answering 202 (PF_AI_MAX_WAIT_MS, default 8000: below the call deadline). */
  maxWaitMs: number;
  /** How long an instance holds a running run between renewals (PF_AI_LEASE_MS, default 15000). */
  leaseMs: number;
  /** How long a cached answer lives (PF_AI_CACHE_TTL_SECONDS, default 86400). */
  cacheTtlSeconds: number;
  /** Hosts (`host` or `host:port`) a provider's base URL may name (PF_AI_PROVIDER_HOSTS). */
  providerHosts: readonly string[];
  /** The first retry's wait after a 429 or 5xx, doubled each time (PF_AI_RETRY_BASE_MS, default 250). */
  retryBaseMs: number;
  /** The longest wait before a retry, a provider's Retry-After included (PF_AI_RETRY_MAX_MS, default 10000). */
  retryMaxMs: number;
  /** How long request logs are kept (PF_AI_REQUEST_LOG_DAYS, default 30). */
  requestLogDays: number;
  /** How often the sweep runs: expired cache entries, old request logs, lapsed reservations (PF_AI_SWEEP_EVERY_MS). */
  sweepEveryMs: number;
  /** The environment the API keys are read from (the process's own). */
  env: Readonly<Record<string, string | undefined>>;
}

export function aiSettings(config: Config): AiSettings {
  const env = config.env;
  return {
    maxWaitMs: wholeSetting(env, "PF_AI_MAX_WAIT_MS", 8_000, 0),
    leaseMs: wholeSetting(env, "PF_AI_LEASE_MS", 15_000, 100),
    cacheTtlSeconds: wholeSetting(env, "PF_AI_CACHE_TTL_SECONDS", 86_400, 1),
    providerHosts: (env.PF_AI_PROVIDER_HOSTS ?? "api.openai.com,api.anthropic.com")
      .split(",")
      .map((host) => host.trim().toLowerCase())
      .filter((host) => host !== ""),
    retryBaseMs: wholeSetting(env, "PF_AI_RETRY_BASE_MS", 250, 1),
    retryMaxMs: wholeSetting(env, "PF_AI_RETRY_MAX_MS", 10_000, 1),
    requestLogDays: wholeSetting(env, "PF_AI_REQUEST_LOG_DAYS", 30, 1),
    sweepEveryMs: wholeSetting(env, "PF_AI_SWEEP_EVERY_MS", 600_000, 10),
    env,
  };
}
