import type { EntityManager, FilterQuery } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import type { DeliveryState, Moderation } from "../domain/checkouts.js";
import { ModerationRow, type InteractionRow } from "./entities.js";

/** One act of moderation: what it makes of the paid message, and who did it, why. */
export interface ModerationAct {
  action: "hide" | "restore";
  moderation: Moderation;
  deliveryState: DeliveryState;
  actor: string;
  relayedBy: string;
  reason: string;
  at: Date;
}

/** Hides or restores a locked paid message, with its record in the moderation log. */
export async function moderateInteraction(
  em: EntityManager,
  row: InteractionRow,
  act: ModerationAct,
): Promise<ModerationRow> {
  Object.assign(row, { moderation: act.moderation, deliveryState: act.deliveryState, updatedAt: act.at });
  const record = em.create(ModerationRow, {
    id: newId("mod"),
    interactionId: row.id,
    creator: row.creator,
    action: act.action,
    actor: act.actor,
    relayedBy: act.relayedBy,
    reason: act.reason,
    createdAt: act.at,
  });
  await em.flush();
  return record;
}

/** Up to `rows` records of a creator's moderation log, newest first, before the cursor's id. */
export function moderationLog(
  em: EntityManager,
  creator: string,
  before: string | undefined,
  rows: number,
): Promise<ModerationRow[]> {
  const where: FilterQuery<ModerationRow> = { creator };
  if (before !== undefined) where.id = { $lt: before };
  return em.find(ModerationRow, where, { orderBy: { id: "desc" }, limit: rows });
}
