import { wholeSetting } from "../runtime/whole-setting.js";

/** How long shared caches and readers may keep a public document (PF_FEED_MAX_AGE_SECONDS, 60); a service reads it once in its settings. */
export function feedMaxAgeSeconds(env: Record<string, string | undefined>): number {
  return wholeSetting(env, "PF_FEED_MAX_AGE_SECONDS", 60, 0);
}
