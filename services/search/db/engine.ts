import type { MikroORM } from "@mikro-orm/postgresql";
import type { SearchEngine } from "../engine/engine.js";
import { readDocument, searchDocuments, suggestTitles } from "./queries.js";
import { tablesOf } from "./sql.js";
import { applyWrites, held, inventory, recordRejections, rejections } from "./writes.js";

/** The search engine on PostgreSQL full text, in the service's own schema. */
export function postgresEngine(orm: MikroORM): SearchEngine {
  const tables = tablesOf(orm);
  return {
    write: (owner, writes, at) => applyWrites(tables, owner, writes, at),
    reject: (owner, refused, at) => recordRejections(tables, owner, refused, at),
    inventory: (owner, page) => inventory(tables, owner, page),
    held: (owner, type, id) => held(tables, owner, type, id),
    rejections: (owner, page) => rejections(tables, owner, page),
    search: (viewer, query, after, at) => searchDocuments(tables, viewer, query, after, at),
    suggest: (viewer, query, after) => suggestTitles(tables, viewer, query, after),
    read: (viewer, key) => readDocument(tables, viewer, key),
  };
}
