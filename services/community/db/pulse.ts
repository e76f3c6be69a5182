import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { type PulseItem, PulseItemSchema } from "../../../gen/pf/community/v1/pulse_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { sql } from "../../kit/db/sql.js";
import { PulseItemRow } from "./entities.js";
import type { Ref } from "./threads.js";

/**
 * Records a ref's first pulse item; answers false when the ref already has
 * one (concurrent first writes meet at the unique constraint: one wins, and
 * its provenance stands for the others).
 */
export async function insertPulseItem(
  em: EntityManager,
  item: { ref: Ref; title: string; url: string; origin: string; actor: string | null; occurredAt: Date; at: Date },
): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `insert into {pulse_items} (id, ref_service, ref_kind, ref_id, title, url, origin, actor,
         occurred_at, recorded_at, updated_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       on conflict (ref_service, ref_kind, ref_id) do nothing returning id`,
    [
      newId("pul"),
      item.ref.service,
      item.ref.kind,
      item.ref.id,
      item.title,
      item.url,
      item.origin,
      item.actor,
      item.occurredAt,
      item.at,
      item.at,
    ],
  );
  return rows.length > 0;
}

/** A ref's item, locked when asked. */
export function pulseItemOfRef(em: EntityManager, ref: Ref, lock = false): Promise<PulseItemRow | null> {
  return em.findOne(
    PulseItemRow,
    { refService: ref.service, refKind: ref.kind, refId: ref.id },
    { refresh: true, ...(lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) },
  );
}

/**
 * The pulse, newest first by (occurred_at, id), after a cursor: a keyset, so
 * items arriving while a reader pages never shift or repeat what it has seen.
 */
export function pulsePage(
  em: EntityManager,
  after: [string, string] | undefined,
  limit: number,
): Promise<PulseItemRow[]> {
  return em.find(
    PulseItemRow,
    {
      retractedAt: null,
      ...(after
        ? {
            $or: [
              { occurredAt: { $lt: new Date(after[0]) } },
              { occurredAt: new Date(after[0]), id: { $lt: after[1] } },
            ],
          }
        : {}),
    },
    { orderBy: { occurredAt: "desc", id: "desc" }, limit },
  );
}

/** An item; the actor only for the writing service (`withActor`), never in the public read. */
export function pulseItemToProto(row: PulseItemRow, withActor = false): PulseItem {
  return create(PulseItemSchema, {
    ref: { service: row.refService, kind: row.refKind, id: row.refId },
    title: row.title,
    url: row.url,
    origin: row.origin,
    occurredAt: timestampFromDate(row.occurredAt),
    actor: withActor ? (row.actor ?? "") : "",
    retractedAt: row.retractedAt ? timestampFromDate(row.retractedAt) : undefined,
  });
}

/** Writes changes to a pulse item in the caller's transaction. */
export async function changePulseItem(
  em: EntityManager,
  row: PulseItemRow,
  changes: Partial<PulseItemRow>,
): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}
