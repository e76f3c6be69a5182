import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The caps on what one person keeps (analysis C.1 "Rate limits", designed; the anonymous resolve limit is declared in trade.proto). */
export interface TradeSettings {
  watchlistsPerPerson: number;
  itemsPerWatchlist: number;
  rulesPerPerson: number;
}

export function tradeSettings(config: Config): TradeSettings {
  return {
    watchlistsPerPerson: wholeSetting(config.env, "PF_TRADE_WATCHLISTS_PER_PERSON", 50, 1),
    itemsPerWatchlist: wholeSetting(config.env, "PF_TRADE_ITEMS_PER_WATCHLIST", 500, 1),
    rulesPerPerson: wholeSetting(config.env, "PF_TRADE_RULES_PER_PERSON", 100, 1),
  };
}
