import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { ModuleRecord } from "./entities.js";

/** A subject's record in a namespace, or null; locked for the rest of the transaction when asked. */
export function moduleRecord(
  em: EntityManager,
  namespace: string,
  subject: string,
  lock = false,
): Promise<ModuleRecord | null> {
  return em.findOne(ModuleRecord, { namespace, subject }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** Writes a record's first revision; a concurrent first write fails on the primary key. */
export async function insertModuleRecord(
  em: EntityManager,
  record: RequiredEntityData<ModuleRecord>,
): Promise<ModuleRecord> {
  const row = em.create(ModuleRecord, record);
  await em.flush();
  return row;
}

/** Writes a record's next revision in the caller's transaction. */
export async function changeModuleRecord(
  em: EntityManager,
  row: ModuleRecord,
  changes: Partial<ModuleRecord>,
): Promise<ModuleRecord> {
  Object.assign(row, changes);
  await em.flush();
  return row;
}
