import { outboundSettings, type OutboundSettings } from "../kit/outbound/fetch.js";
import type { ServiceContext } from "../kit/service/module.js";
import { sourcesSettings, type SourcesSettings } from "./settings.js";

/** Built once per sources instance by the host: the service context, its settings and the outbound HTTP settings. */
export interface SourcesContext extends ServiceContext {
  settings: SourcesSettings;
  /** What fetches may reach and take (PF_FETCH_*). */
  outbound: OutboundSettings;
}

export function sourcesContext(base: ServiceContext): SourcesContext {
  return { ...base, settings: sourcesSettings(base.config), outbound: outboundSettings(base.config) };
}
