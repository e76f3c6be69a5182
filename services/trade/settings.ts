import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The caps on what one person keeps and the anonymous resolve limit (analysis C.1 "Rate limits", designed). */
export interface TradeSettings {
  watchlistsPerPerson: number;
  itemsPerWatchlist: number;
  rulesPerPerson: number;
  /** Resolves per minute from one anonymous client address (its keyed hash; an IPv6 /64). */
  anonymousResolvesPerMinute: number;
}

export function tradeSettings(config: Config): TradeSettings {
  return {
    watchlistsPerPerson: wholeSetting(config.env, "PF_TRADE_WATCHLISTS_PER_PERSON", 50, 1),
    itemsPerWatchlist: wholeSetting(config.env, "PF_TRADE_ITEMS_PER_WATCHLIST", 500, 1),
    rulesPerPerson: wholeSetting(config.env, "PF_TRADE_RULES_PER_PERSON", 100, 1),
    anonymousResolvesPerMinute: wholeSetting(config.env, "PF_TRADE_RESOLVES_PER_MINUTE", 60, 1),
  };
}
