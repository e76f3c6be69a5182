import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The search service's settings (README, "Settings"). */
export interface SearchSettings {
  /** Queries (search, suggest, one-document reads) one anonymous address may make per minute (PF_SEARCH_ANONYMOUS_PER_MINUTE). */
  anonymousPerMinute: number;
}

export function searchSettings(config: Config): SearchSettings {
  return { anonymousPerMinute: wholeSetting(config.env, "PF_SEARCH_ANONYMOUS_PER_MINUTE", 120, 1) };
}
