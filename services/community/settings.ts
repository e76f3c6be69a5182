import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** A rate: at most `limit` hits per `windowMs`. */
export interface Rate {
  limit: number;
  windowMs: number;
}

/** The community service's own settings, read once from the environment (documented in README.md). */
export interface CommunitySettings {
  /** EntityRef types (service/kind) browsers may resolve threads of (PF_COMMUNITY_BROWSER_THREAD_TYPES). */
  browserThreadTypes: ReadonlySet<string>;
  /** Pastes created or forked per person (PF_COMMUNITY_PASTES_PER_10_MINUTES, default 10). */
  pastePerPerson: Rate;
  /** Comments per person (PF_COMMUNITY_COMMENTS_PER_10_MINUTES, default 30). */
  commentPerPerson: Rate;
  /** Comment and thread votes per person (PF_COMMUNITY_VOTES_PER_10_MINUTES, default 60). */
  votePerPerson: Rate;
  /** Forum threads and replies per person (PF_COMMUNITY_POSTS_PER_10_MINUTES, default 20). */
  postPerPerson: Rate;
  /** Largest paste text in bytes (PF_COMMUNITY_PASTE_MAX_BYTES, default 512 KiB); larger is 413. */
  pasteMaxBytes: number;
}

const MINUTE = 60_000;

/** The allow-list's default: the types with public pages that carry comments. */
export const DEFAULT_BROWSER_THREAD_TYPES =
  "blog/post,news/story,reviews/entity,community/paste,space/thread,deals/offer";

export function communitySettings(config: Config): CommunitySettings {
  const env = config.env;
  const whole = (name: string, fallback: number) => wholeSetting(env, name, fallback, 1);
  const types = (env.PF_COMMUNITY_BROWSER_THREAD_TYPES ?? DEFAULT_BROWSER_THREAD_TYPES)
    .split(",")
    .map((type) => type.trim())
    .filter((type) => type !== "");
  for (const type of types) {
    if (!/^[a-z][a-z0-9_.-]*\/[a-z][a-z0-9_.-]*$/.test(type))
      throw new Error(`PF_COMMUNITY_BROWSER_THREAD_TYPES: "${type}" is not service/kind`);
  }
  return {
    browserThreadTypes: new Set(types),
    pastePerPerson: { limit: whole("PF_COMMUNITY_PASTES_PER_10_MINUTES", 10), windowMs: 10 * MINUTE },
    commentPerPerson: { limit: whole("PF_COMMUNITY_COMMENTS_PER_10_MINUTES", 30), windowMs: 10 * MINUTE },
    votePerPerson: { limit: whole("PF_COMMUNITY_VOTES_PER_10_MINUTES", 60), windowMs: 10 * MINUTE },
    postPerPerson: { limit: whole("PF_COMMUNITY_POSTS_PER_10_MINUTES", 20), windowMs: 10 * MINUTE },
    pasteMaxBytes: whole("PF_COMMUNITY_PASTE_MAX_BYTES", 512 * 1024),
  };
}
