import type { ServiceContext } from "../kit/service/module.js";
import { LinkHub } from "./links.js";
import { botSettings, type BotSettings } from "./settings.js";

/** Built once per robot-control instance by the host: the service context, its settings and the links it holds. */
export interface BotContext extends ServiceContext {
  settings: BotSettings;
  /** The device links and operator channels this instance holds (links.ts). */
  links: LinkHub;
}

export function botContext(base: ServiceContext): BotContext {
  return { ...base, settings: botSettings(base.config), links: new LinkHub(base.bus, base.logger) };
}
