import type { ServiceContext } from "../kit/service/module.js";
import { postgresEngine } from "./db/engine.js";
import type { SearchEngine } from "./engine/engine.js";

/** Built once by the host: the service context and the engine. */
export interface SearchContext extends ServiceContext {
  engine: SearchEngine;
}

export function searchContext(base: ServiceContext): SearchContext {
  return { ...base, engine: postgresEngine(base.orm) };
}
