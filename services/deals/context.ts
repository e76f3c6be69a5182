import type { ServiceContext } from "../kit/service/module.js";
import { dealsSettings, type DealsSettings } from "./settings.js";

/** Built once per deals instance by the host: the service context and the deals settings. */
export interface DealsContext extends ServiceContext {
  settings: DealsSettings;
}

export function dealsContext(base: ServiceContext): DealsContext {
  return { ...base, settings: dealsSettings(base.config) };
}
