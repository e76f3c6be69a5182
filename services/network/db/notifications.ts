import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { Notification } from "./entities.js";

/** Writes pushed notifications, one row per recipient. */
export async function insertNotifications(em: EntityManager, rows: RequiredEntityData<Notification>[]): Promise<void> {
  await em.insertMany(Notification, rows);
}
