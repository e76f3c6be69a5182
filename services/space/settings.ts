import { feedMaxAgeSeconds } from "../kit/feeds/settings.js";
import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";
import { parseSeed, type SpaceSeed } from "./domain/spaces.js";

/** The forum's limits (designed: "Numeric values of every limit of these services: not shown"). */
export interface SpaceSettings {
  /** Threads and replies one writer (person, or an AI service) may post per 10 minutes. */
  postsPer10Min: number;
  /** Votes one person may cast per 10 minutes. */
  votesPer10Min: number;
  /** Threads in a feed. */
  feedItems: number;
  /** Cache-Control max-age of the feeds (PF_FEED_MAX_AGE_SECONDS, the kit's). */
  feedMaxAgeSeconds: number;
  /** The absolute address the forum's pages are served under, for feed links. */
  siteUrl: string;
  /** How long vip and network may take before they count as not answering (the answer is then no). */
  callTimeoutMs: number;
  /** Spaces created or updated at start (PF_SPACE_SEED, JSON), for `npm start`. */
  seed: SpaceSeed[];
}

export function spaceSettings(config: Config): SpaceSettings {
  const env = config.env;
  const siteUrl = (env.PF_SPACE_SITE_URL || `http://localhost:${config.httpPort}/space`).replace(/\/+$/, "");
  if (!URL.canParse(siteUrl) || !/^https?:$/.test(new URL(siteUrl).protocol))
    throw new Error(`PF_SPACE_SITE_URL must be an absolute http(s) URL, got ${JSON.stringify(siteUrl)}`);
  return {
    postsPer10Min: wholeSetting(env, "PF_SPACE_POSTS_PER_10_MIN", 20, 1),
    votesPer10Min: wholeSetting(env, "PF_SPACE_VOTES_PER_10_MIN", 60, 1),
    feedItems: wholeSetting(env, "PF_SPACE_FEED_ITEMS", 50, 1),
    feedMaxAgeSeconds: feedMaxAgeSeconds(env),
    siteUrl,
    callTimeoutMs: wholeSetting(env, "PF_SPACE_CALL_TIMEOUT_MS", 2_000, 100),
    seed: parseSeed(env.PF_SPACE_SEED ?? ""),
  };
}
