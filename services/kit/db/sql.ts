import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "./orm.js";

/**
 * The one way to run a raw statement in a service's db/: in the caller's transaction when `em` is in one (it sees
 * that transaction's writes), else as one statement of its own. `?` parameters; `{table}` names are qualified with
 * the service's schema. Hot reads outside a transaction are a `HotRead` (reads.ts) instead.
 */
export function sql<T>(em: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  const qualifiedText = text.replace(/\{(\w+)\}/g, (_, table: string) => qualified(em, table));
  return em.getConnection().execute<T[]>(qualifiedText, params, "all", em.getTransactionContext());
}
