import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** A rate: at most `limit` hits per `windowMs`. */
export interface Rate {
  limit: number;
  windowMs: number;
}

/** The deals service's own settings, read once from the environment (documented in README.md). */
export interface DealsSettings {
  /** Offer submits per person (PF_DEALS_SUBMITS_PER_HOUR, default 20 an hour). */
  submitPerPerson: Rate;
  /** Votes set or removed per person (PF_DEALS_VOTES_PER_PERSON_MINUTE, default 30 a minute). */
  votePerPerson: Rate;
  /** Votes per IP hash (PF_DEALS_VOTES_PER_IP_MINUTE, default 60 a minute). */
  votePerIp: Rate;
  /** Votes per offer (PF_DEALS_VOTES_PER_OFFER_MINUTE, default 300 a minute). */
  votePerOffer: Rate;
  /** Flags per person (PF_DEALS_FLAGS_PER_HOUR, default 10 an hour). */
  flagPerPerson: Rate;
  /** Observations recorded by offer updates per person (PF_DEALS_OBSERVATIONS_PER_HOUR, default 60 an hour). */
  observePerPerson: Rate;
  /** Up-votes each way between two people that make a vote ring (PF_DEALS_VOTE_RING_THRESHOLD, default 3). */
  voteRingThreshold: number;
  /** How far back vote-ring detection looks (PF_DEALS_VOTE_RING_DAYS, default 7). */
  voteRingWindowMs: number;
  /** How often offers past their stated end are expired (PF_DEALS_EXPIRY_EVERY_MS, default 60000). */
  expiryEveryMs: number;
  /** Watches and saved searches one person keeps at once (PF_DEALS_WATCHES_PER_PERSON, default 200). */
  watchesPerPerson: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export function dealsSettings(config: Config): DealsSettings {
  const env = config.env;
  const whole = (name: string, fallback: number) => wholeSetting(env, name, fallback, 1);
  return {
    submitPerPerson: { limit: whole("PF_DEALS_SUBMITS_PER_HOUR", 20), windowMs: HOUR },
    votePerPerson: { limit: whole("PF_DEALS_VOTES_PER_PERSON_MINUTE", 30), windowMs: MINUTE },
    votePerIp: { limit: whole("PF_DEALS_VOTES_PER_IP_MINUTE", 60), windowMs: MINUTE },
    votePerOffer: { limit: whole("PF_DEALS_VOTES_PER_OFFER_MINUTE", 300), windowMs: MINUTE },
    flagPerPerson: { limit: whole("PF_DEALS_FLAGS_PER_HOUR", 10), windowMs: HOUR },
    observePerPerson: { limit: whole("PF_DEALS_OBSERVATIONS_PER_HOUR", 60), windowMs: HOUR },
    voteRingThreshold: whole("PF_DEALS_VOTE_RING_THRESHOLD", 3),
    voteRingWindowMs: whole("PF_DEALS_VOTE_RING_DAYS", 7) * 24 * HOUR,
    expiryEveryMs: whole("PF_DEALS_EXPIRY_EVERY_MS", 60_000),
    watchesPerPerson: whole("PF_DEALS_WATCHES_PER_PERSON", 200),
  };
}
