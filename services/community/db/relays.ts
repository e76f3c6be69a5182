import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { type Relay, RelaySchema } from "../../../gen/pf/community/v1/relays_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { RelayRow } from "./entities.js";

export const relayNotFound = () => problem(404, "relay.not_found", "No such relay.");

/** Every relay, by name. */
export function relays(em: EntityManager): Promise<RelayRow[]> {
  return em.find(RelayRow, {}, { orderBy: { id: "asc" } });
}

/** A relay by name, or null. */
export function relayById(em: EntityManager, id: string): Promise<RelayRow | null> {
  return em.findOne(RelayRow, { id });
}

/** Writes a relay: the one of this id changed, or a new one. */
export async function saveRelay(
  em: EntityManager,
  found: RelayRow | null,
  relay: RequiredEntityData<RelayRow>,
): Promise<RelayRow> {
  const row = found ? Object.assign(found, relay) : em.create(RelayRow, relay);
  await em.flush();
  return row;
}

/** Deletes a relay. */
export async function deleteRelay(em: EntityManager, row: RelayRow): Promise<void> {
  em.remove(row);
  await em.flush();
}

/** A relay as shown: the webhook only as its last 4 characters. */
export function relayToProto(row: RelayRow): Relay {
  return create(RelaySchema, {
    id: row.id,
    platform: row.platform,
    webhookMasked: `…${row.webhookLast4}`,
    scope: row.scope,
    enabled: row.enabled,
    updatedAt: timestampFromDate(row.updatedAt),
  });
}
