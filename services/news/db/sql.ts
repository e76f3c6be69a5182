import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

/** Runs SQL in the caller's transaction; `{table}` names are qualified with the service's schema. */
export function sql<T>(em: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  const qualifiedText = text.replace(/\{(\w+)\}/g, (_, table: string) => qualified(em, table));
  return em.getConnection().execute<T[]>(qualifiedText, params, "all", em.getTransactionContext());
}
