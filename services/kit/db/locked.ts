import type { EntityDictionary, EntityManager, EntityName } from "@mikro-orm/postgresql";
import { sql } from "./sql.js";

/**
 * The row of `entity` under primary key `id`, locked for the rest of the caller's transaction (`for update`), as a
 * managed entity: changes to it are written by the next flush, as `em.findOne(…, { lockMode })`'s would be. One
 * statement whose row MikroORM maps, without its query building: on a hot path (a job's every report) the ORM's
 * locked `findOne` cost three times the statement.
 */
export async function lockedById<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  id: string,
): Promise<T | null> {
  const meta = em.getMetadata().get(entity);
  const [key] = meta.primaryKeys;
  const column = meta.properties[key].fieldNames[0];
  const [row] = await sql<EntityDictionary<T>>(
    em,
    `select * from {${meta.tableName}} where "${column}" = ? for update`,
    [id],
  );
  return row ? em.map(entity, row) : null;
}
