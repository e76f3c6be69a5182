import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager, FilterQuery } from "@mikro-orm/postgresql";
import { ProviderEventSchema, type ProviderEvent } from "../../../gen/pf/billing/v1/admin_pb.js";
import { ProviderEventStatus } from "../../../gen/pf/billing/v1/intents_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import type { VerifiedEvent } from "../provider/provider.js";
import { ProviderEventRow } from "./entities.js";

export type ProviderEventState = "pending" | "held" | "applied" | "ignored" | "failed";

export const EVENT_STATES: readonly ProviderEventState[] = ["pending", "held", "applied", "ignored", "failed"];

const STATUS: Record<ProviderEventState, ProviderEventStatus> = {
  pending: ProviderEventStatus.PENDING,
  held: ProviderEventStatus.HELD,
  applied: ProviderEventStatus.APPLIED,
  ignored: ProviderEventStatus.IGNORED,
  failed: ProviderEventStatus.FAILED,
};

export function eventStatusToProto(state: string): ProviderEventStatus {
  return STATUS[state as ProviderEventState] ?? ProviderEventStatus.UNSPECIFIED;
}

/** How many provider events are held for the thaw. */
export function heldEventCount(em: EntityManager): Promise<number> {
  return em.count(ProviderEventRow, { status: "held" });
}

/** The stored provider event with this id, known to exist. */
export function providerEventById(em: EntityManager, id: string): Promise<ProviderEventRow> {
  return em.findOneOrFail(ProviderEventRow, { id });
}

/** Up to `rows` stored provider events (of one state, when given), newest first, before the cursor's sequence. */
export function providerEventsPage(
  em: EntityManager,
  status: string | undefined,
  before: bigint | undefined,
  rows: number,
): Promise<ProviderEventRow[]> {
  const where: FilterQuery<ProviderEventRow> = {
    ...(status !== undefined && { status }),
    ...(before !== undefined && { seq: { $lt: before } }),
  };
  return em.find(ProviderEventRow, where, { orderBy: { seq: "desc" }, limit: rows });
}

export function providerEventToProto(row: ProviderEventRow): ProviderEvent {
  return create(ProviderEventSchema, {
    id: row.id,
    provider: row.provider,
    providerEventId: row.providerEventId,
    type: row.type,
    providerOrderId: row.providerOrderId,
    status: eventStatusToProto(row.status),
    deliveries: row.deliveries,
    detail: row.detail,
    receivedAt: timestampFromDate(row.receivedAt),
    appliedAt: row.appliedAt ? timestampFromDate(row.appliedAt) : undefined,
  });
}

/**
 * Stores a verified delivery once per (provider, provider event id): a first
 * delivery is pending, or held while the economy is frozen; a duplicate only
 * counts its delivery.
 */
export async function storeEvent(
  em: EntityManager,
  provider: string,
  event: VerifiedEvent,
  payload: string,
  at: Date,
): Promise<{ id: string; status: ProviderEventState; duplicate: boolean }> {
  const [row] = await sql<{ id: string; status: ProviderEventState; inserted: boolean }>(
    em,
    `insert into {provider_events}
       (id, provider, provider_event_id, type, provider_order_id, payload, status, received_at)
     values (?, ?, ?, ?, ?, ?, case when ${FROZEN} then 'held' else 'pending' end, ?)
     on conflict (provider, provider_event_id) do update set deliveries = provider_events.deliveries + 1
     returning id, status, xmax = 0 as inserted`,
    [newId("pev"), provider, event.id, event.type, event.orderId, payload, at],
  );
  return { id: row.id, status: row.status, duplicate: !row.inserted };
}

/** Whether the economy is frozen, as an SQL expression. */
const FROZEN = `(select frozen from {economy} where id = 1)`;

/** A stored event claimed for applying, as its row reads. */
export type ClaimedEvent = {
  id: string;
  seq: string;
  provider: string;
  type: string;
  provider_order_id: string;
  payload: string;
  status: ProviderEventState;
};

/** What applying an event came to. */
export type EventOutcome = { status: ProviderEventState; detail: string };

/**
 * Which event to claim: the next to apply after a `seq` (pending, or held
 * unless frozen), a delivery just stored (still pending), or any one by id (a reprocess).
 */
export type EventClaim = { nextAfter: string } | { delivered: string } | { any: string };

/**
 * Claims one stored event under its row lock, inside the caller's
 * transaction; the next to apply and a fresh delivery skip rows another
 * instance holds, so no event is applied twice at once.
 */
export async function claimProviderEvent(em: EntityManager, which: EventClaim): Promise<ClaimedEvent | undefined> {
  const next = `seq > ? and (status = 'pending' or (status = 'held' and not ${FROZEN}))
    order by seq limit 1 for update skip locked`;
  const [where, param] =
    "nextAfter" in which
      ? [next, which.nextAfter]
      : "delivered" in which
        ? [`id = ? and status = 'pending' for update skip locked`, which.delivered]
        : [`id = ? for update`, which.any];
  const [row] = await sql<ClaimedEvent>(
    em,
    `select id, seq, provider, type, provider_order_id, payload, status
     from {provider_events} where ${where}`,
    [param],
  );
  return row;
}

/** Records what applying an event came to, unless it changed from `unlessChangedFrom` in between. */
export function recordOutcome(
  em: EntityManager,
  id: string,
  outcome: EventOutcome,
  at: Date,
  unlessChangedFrom?: ProviderEventState,
) {
  return em.nativeUpdate(ProviderEventRow, unlessChangedFrom ? { id, status: unlessChangedFrom } : { id }, {
    ...outcome,
    ...(outcome.status === "applied" && { appliedAt: at }),
  });
}
