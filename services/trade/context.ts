import type { ServiceContext } from "../kit/service/module.js";
import { tradeSettings, type TradeSettings } from "./settings.js";

/** Built once per trade instance by the host: the service context and the trade settings. */
export interface TradeContext extends ServiceContext {
  settings: TradeSettings;
}

export function tradeContext(base: ServiceContext): TradeContext {
  return { ...base, settings: tradeSettings(base.config) };
}
