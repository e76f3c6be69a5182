import { wholeSetting } from "../runtime/whole-setting.js";

/** How every owner's relay and reconciliation run (README: "Search documents"); read once per service. */
export interface SearchDocumentSettings {
  /** How often the relay looks for pending documents besides after each commit (PF_SEARCH_RELAY_POLL_MS, 5000). */
  pollMs: number;
  /** Writes per call to search (PF_SEARCH_RELAY_BATCH, 500; 1–500). */
  batch: number;
  /** The longest pause after search failed to take a batch (PF_SEARCH_RELAY_MAX_BACKOFF_MS, 30000). */
  maxBackoffMs: number;
  /** How often the sweep and the inventory comparison run (PF_SEARCH_RECONCILE_EVERY_MS, 3600000). */
  reconcileEveryMs: number;
  /** When the first reconciliation runs after start (PF_SEARCH_RECONCILE_FIRST_MS, 10000). */
  reconcileFirstMs: number;
}

export function searchDocumentSettings(env: Record<string, string | undefined>): SearchDocumentSettings {
  const batch = wholeSetting(env, "PF_SEARCH_RELAY_BATCH", 500, 1);
  if (batch > 500) throw new Error(`PF_SEARCH_RELAY_BATCH must be at most 500 (search's batch limit), got ${batch}`);
  return {
    pollMs: wholeSetting(env, "PF_SEARCH_RELAY_POLL_MS", 5_000, 10),
    batch,
    maxBackoffMs: wholeSetting(env, "PF_SEARCH_RELAY_MAX_BACKOFF_MS", 30_000, 1_000),
    reconcileEveryMs: wholeSetting(env, "PF_SEARCH_RECONCILE_EVERY_MS", 3_600_000, 1_000),
    reconcileFirstMs: wholeSetting(env, "PF_SEARCH_RECONCILE_FIRST_MS", 10_000, 0),
  };
}
