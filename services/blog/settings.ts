import { feedMaxAgeSeconds } from "../kit/feeds/settings.js";
import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The blog's settings (README "Settings"). */
export interface BlogSettings {
  /** The handle of the official blog, where staff may act (PF_BLOG_OFFICIAL_HANDLE; none when empty). */
  officialHandle: string;
  /** Where readers find the blogs: absolute links in feeds and search (PF_BLOG_SITE_URL). */
  siteUrl: string;
  /** How often the scheduler looks for due schedules (PF_BLOG_SCHEDULER_EVERY_MS). */
  schedulerEveryMs: number;
  feedMaxAgeSeconds: number;
}

export function blogSettings(config: Config): BlogSettings {
  const env = config.env;
  const siteUrl = (env.PF_BLOG_SITE_URL || `http://localhost:${config.httpPort}/blog`).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(siteUrl))
    throw new Error(`PF_BLOG_SITE_URL must be an absolute http(s) URL, got ${JSON.stringify(siteUrl)}`);
  return {
    officialHandle: (env.PF_BLOG_OFFICIAL_HANDLE ?? "").trim().toLowerCase(),
    siteUrl,
    schedulerEveryMs: wholeSetting(env, "PF_BLOG_SCHEDULER_EVERY_MS", 1_000, 10),
    feedMaxAgeSeconds: feedMaxAgeSeconds(env),
  };
}
