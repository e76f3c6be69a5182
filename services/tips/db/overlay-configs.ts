import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { OverlayConfigRow } from "./overlay-entities.js";

/** A creator's overlay configs, oldest first, at most `limit` when given. */
export function configsOf(em: EntityManager, creator: string, limit?: number): Promise<OverlayConfigRow[]> {
  return em.find(OverlayConfigRow, { creator }, { orderBy: { id: "asc" }, ...(limit !== undefined && { limit }) });
}

/** How many overlay configs a creator keeps. */
export function configCount(em: EntityManager, creator: string): Promise<number> {
  return em.count(OverlayConfigRow, { creator });
}

/** The overlay config with this id, anyone's, locked for a change when asked; null when there is none. */
export function configById(em: EntityManager, id: string, lock = false): Promise<OverlayConfigRow | null> {
  return em.findOne(OverlayConfigRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** Writes a new overlay config under a new id. */
export async function insertConfig(
  em: EntityManager,
  config: Omit<RequiredEntityData<OverlayConfigRow>, "id">,
): Promise<OverlayConfigRow> {
  const row = em.create(OverlayConfigRow, { ...config, id: newId("ovc") });
  await em.flush();
  return row;
}

/** Writes changes to an overlay config. */
export async function changeConfig(
  em: EntityManager,
  row: OverlayConfigRow,
  changes: Partial<OverlayConfigRow>,
): Promise<void> {
  em.assign(row, changes);
  await em.flush();
}
