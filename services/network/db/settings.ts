import type { EntityManager } from "@mikro-orm/postgresql";
import { Setting } from "./entities.js";

/** The network's setting of this name (sealed where secret), or null when it is unset. */
export const settingOf = (em: EntityManager, name: string) => em.findOne(Setting, { name });

/** Sets a setting. */
export async function saveSetting(em: EntityManager, name: string, value: string, at: Date): Promise<void> {
  await em.upsert(Setting, { name, value, updatedAt: at });
}

/** Unsets a setting. */
export async function deleteSetting(em: EntityManager, name: string): Promise<void> {
  await em.nativeDelete(Setting, { name });
}
