import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** Size caps of what an install stores and how long network may take to answer (designed: the spec names none). */
export interface GamesSettings {
  /** Largest manifest, in bytes of its canonical JSON. */
  manifestMaxBytes: number;
  /** Largest content pack, in bytes of its canonical JSON (events carry its digest, never the pack). */
  contentMaxBytes: number;
  /** How long the staff-list call to network may take before it counts as not answered (503). */
  networkTimeoutMs: number;
}

export function gamesSettings(config: Config): GamesSettings {
  return {
    manifestMaxBytes: wholeSetting(config.env, "PF_GAMES_MANIFEST_MAX_BYTES", 64 * 1024, 1024),
    contentMaxBytes: wholeSetting(config.env, "PF_GAMES_CONTENT_MAX_BYTES", 256 * 1024, 1024),
    networkTimeoutMs: wholeSetting(config.env, "PF_GAMES_NETWORK_TIMEOUT_MS", 2_000, 100),
  };
}
