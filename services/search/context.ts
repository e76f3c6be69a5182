import type { ServiceContext } from "../kit/runtime/module.js";
import { postgresEngine } from "./db/engine.js";
import type { SearchEngine } from "./engine/engine.js";
import { searchSettings, type SearchSettings } from "./settings.js";

/** Built once by the host: the service context, the search settings and the engine. */
export interface SearchContext extends ServiceContext {
  settings: SearchSettings;
  engine: SearchEngine;
}

export function searchContext(base: ServiceContext): SearchContext {
  return { ...base, settings: searchSettings(base.config), engine: postgresEngine(base.orm) };
}
