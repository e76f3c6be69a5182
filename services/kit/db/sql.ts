import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "./orm.js";

/**
 * The one way to run a raw statement in a service's db/: in the caller's transaction when `em` is in one (it sees
 * that transaction's writes), else as one statement of its own. `?` parameters; `{table}` names (lower-case and `_`,
 * as `HotRead`'s: a pattern's `{3}` is left alone) are qualified with the service's schema. It answers the rows (none
 * for a write without `returning`). Hot reads outside a transaction are a `HotRead` (reads.ts) instead.
 */
export function sql<T>(em: EntityManager, text: string, params: unknown[] = []): Promise<T[]> {
  const qualifiedText = text.replace(/\{([a-z_]+)\}/g, (_, table: string) => qualified(em, table));
  return em.getConnection().execute<T[]>(qualifiedText, params, "all", em.getTransactionContext());
}
