import type { ServiceContext } from "../kit/service/module.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";
import { postgresEngine } from "./db/engine.js";
import { tablesOf } from "./db/sql.js";
import { indexedEngine, type IndexedEngine } from "./engine/indexed.js";

/** Built once by the host: the service context and the engine (PostgreSQL, with the in-memory index in front). */
export interface SearchContext extends ServiceContext {
  engine: IndexedEngine;
}

export function searchContext(base: ServiceContext): SearchContext {
  // Past this many live documents the instance queries PostgreSQL only (0: no index).
  const maxDocuments = wholeSetting(base.config.env, "PF_SEARCH_INDEX_MAX_DOCUMENTS", 250_000);
  const engine = indexedEngine(tablesOf(base.orm), postgresEngine(base.orm), { maxDocuments }, base.logger);
  return { ...base, engine };
}
