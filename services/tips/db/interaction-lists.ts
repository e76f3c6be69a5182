import type { EntityManager, FilterQuery, RequiredEntityData } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import type { InteractionKind } from "../domain/checkouts.js";
import { InteractionRow } from "./entities.js";

/** Which side of an interaction history is read: the person as creator, as supporter, or both. */
export interface HistoryFilter {
  person: string;
  asCreator: boolean;
  asSupporter: boolean;
  kind?: string;
}

/** Up to `rows` interactions of a person's history, newest first, before the cursor's id. */
export function interactionHistory(
  em: EntityManager,
  filter: HistoryFilter,
  before: string | undefined,
  rows: number,
): Promise<InteractionRow[]> {
  const sides: FilterQuery<InteractionRow>[] = [];
  if (filter.asCreator) sides.push({ creator: filter.person });
  if (filter.asSupporter) sides.push({ supporter: filter.person });
  const where: FilterQuery<InteractionRow> = { $or: sides };
  if (filter.kind) where.kind = filter.kind;
  if (before !== undefined) where.id = { $lt: before };
  return em.find(InteractionRow, where, { orderBy: { id: "desc" }, limit: rows });
}

/** Up to `rows` of a creator's hidden and held paid messages, newest first, before the cursor's id. */
export function moderationQueue(
  em: EntityManager,
  creator: string,
  before: string | undefined,
  rows: number,
): Promise<InteractionRow[]> {
  const where: FilterQuery<InteractionRow> = {
    creator,
    kind: "paid_message",
    moderation: { $in: ["hidden", "held"] },
  };
  if (before !== undefined) where.id = { $lt: before };
  return em.find(InteractionRow, where, { orderBy: { id: "desc" }, limit: rows });
}

/** Up to `rows` of a creator's queued media requests, the first settled first, after the cursor's (settled_at, id). */
export function mediaQueue(
  em: EntityManager,
  creator: string,
  after: { settledAt: Date; id: string } | undefined,
  rows: number,
): Promise<InteractionRow[]> {
  const where: FilterQuery<InteractionRow> = {
    creator,
    kind: "media_request" satisfies InteractionKind,
    deliveryState: "queued",
  };
  if (after)
    where.$or = [{ settledAt: { $gt: after.settledAt } }, { settledAt: after.settledAt, id: { $gt: after.id } }];
  return em.find(InteractionRow, where, { orderBy: { settledAt: "asc", id: "asc" }, limit: rows });
}

/** A creator's newest `limit` settled visible paid messages: what the public tip page shows. */
export function publicMessagesOf(em: EntityManager, creator: string, limit: number): Promise<InteractionRow[]> {
  return em.find(
    InteractionRow,
    { creator, kind: "paid_message", paymentState: "settled", moderation: "visible" },
    { orderBy: { id: "desc" }, limit },
  );
}

/** The interaction a provider already reported under its reference, if any. */
export function externalByReference(
  em: EntityManager,
  provider: string,
  providerRef: string,
): Promise<InteractionRow | null> {
  return em.findOne(InteractionRow, { provider, providerRef });
}

/** Records an external interaction under a new id. */
export async function insertExternal(
  em: EntityManager,
  interaction: Omit<RequiredEntityData<InteractionRow>, "id">,
): Promise<InteractionRow> {
  const row = em.create(InteractionRow, { ...interaction, id: newId("int") });
  await em.flush();
  return row;
}
