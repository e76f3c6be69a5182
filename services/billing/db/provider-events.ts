import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ProviderEventSchema, type ProviderEvent } from "../../../gen/pf/billing/v1/admin_pb.js";
import { ProviderEventStatus } from "../../../gen/pf/billing/v1/billing_pb.js";
import { newId } from "../../kit/handler/ids.js";
import type { VerifiedEvent } from "../provider/provider.js";
import type { ProviderEventRow } from "./entities.js";

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
  const [row] = await em.getConnection().execute<{ id: string; status: ProviderEventState; inserted: boolean }[]>(
    `insert into billing.provider_events (id, provider, provider_event_id, type, provider_order_id, payload, status, received_at)
     values (?, ?, ?, ?, ?, ?, case when (select frozen from billing.economy where id = 1) then 'held' else 'pending' end, ?)
     on conflict (provider, provider_event_id) do update set deliveries = provider_events.deliveries + 1
     returning id, status, xmax = 0 as inserted`,
    [newId("pev"), provider, event.id, event.type, event.orderId, payload, at],
    "all",
    em.getTransactionContext(),
  );
  return { id: row.id, status: row.status, duplicate: !row.inserted };
}
