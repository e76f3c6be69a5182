import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The media service's settings (README, "Settings"). */
export interface MediaSettings {
  /** The largest file one upload may store, in bytes (PF_MEDIA_MAX_BYTES, default 100 MiB). */
  maxBytes: number;
}

export function mediaSettings(config: Config): MediaSettings {
  return { maxBytes: wholeSetting(config.env, "PF_MEDIA_MAX_BYTES", 100 * 1024 * 1024, 1) };
}
