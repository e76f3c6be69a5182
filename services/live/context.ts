import type { ServiceContext } from "../kit/service/module.js";
import { liveSettings, type LiveSettings } from "./settings.js";
import { ViewerMarks } from "./viewers.js";

/** Built once per live instance by the host: the service context, its settings and the viewers it saw. */
export interface LiveContext extends ServiceContext {
  settings: LiveSettings;
  viewers: ViewerMarks;
}

export function liveContext(base: ServiceContext): LiveContext {
  return { ...base, settings: liveSettings(base.config), viewers: new ViewerMarks() };
}
