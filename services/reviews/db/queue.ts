import { type EntityManager, LockMode } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { QueueItemRow } from "./entities.js";

/** Queues a sources item once (a revision of the item changes nothing once queued). */
export async function queueItem(
  em: EntityManager,
  input: {
    itemId: string;
    sourceKey: string;
    url: string;
    title: string;
    reason: string;
    candidates: string[];
    at: Date;
  },
): Promise<void> {
  if (await em.findOne(QueueItemRow, { itemId: input.itemId })) return;
  await em.insert(QueueItemRow, {
    id: newId("rsq"),
    itemId: input.itemId,
    sourceKey: input.sourceKey,
    url: input.url,
    title: input.title,
    reason: input.reason,
    candidates: input.candidates,
    state: "pending",
    entityId: "",
    signalId: "",
    decidedBy: "",
    createdAt: input.at,
    decidedAt: null,
  });
}

/** Pending items, oldest first. */
export function pendingPage(em: EntityManager, limit: number, after?: string): Promise<QueueItemRow[]> {
  return em.find(
    QueueItemRow,
    { state: "pending", ...(after ? { id: { $gt: after } } : {}) },
    { orderBy: { id: "asc" }, limit: limit + 1 },
  );
}

/** One queue item, or null; locked to the end of the transaction (one editor decides it). */
export function lockedQueueItem(em: EntityManager, id: string): Promise<QueueItemRow | null> {
  return em.findOne(QueueItemRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** An editor's decision on a pending item: ignored, or confirmed as an entity with the mention signal recorded. */
export async function recordQueueDecision(
  em: EntityManager,
  item: QueueItemRow,
  decision: { by: string; at: Date } & (
    { state: "ignored" } | { state: "confirmed"; entityId: string; signalId: string }
  ),
): Promise<void> {
  item.state = decision.state;
  item.decidedBy = decision.by;
  item.decidedAt = decision.at;
  if (decision.state === "confirmed") {
    item.entityId = decision.entityId;
    item.signalId = decision.signalId;
  }
  await em.flush();
}
