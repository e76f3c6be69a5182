import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { type ModerationRecord, ModerationRecordSchema } from "../../../gen/pf/community/v1/common_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { moderationRecorded } from "../events.js";
import { ModerationRow } from "./entities.js";
import type { Ref } from "./threads.js";

/** What a moderation record says was asked. */
export interface ModerationEntry {
  action: string;
  target: Ref;
  /** The staff person vouched for, or the service acting as itself. */
  actor: string;
  /** The vouched person forwarded to another service (forum actions), null for a service acting as itself. */
  person: string | null;
  relayedBy: string;
  reason: string;
  value?: string;
  /** An edit's new text (forum post edits). */
  body?: string;
  /** Applied here ("applied"), or by another service ("pending" until it answered). */
  status: "applied" | "pending";
  requestKey?: string;
  at: Date;
}

/** Writes one moderation record and its event, in the caller's transaction. */
export async function recordModeration(em: EntityManager, entry: ModerationEntry): Promise<ModerationRow> {
  const row = em.create(ModerationRow, {
    id: newId("mod"),
    action: entry.action,
    targetService: entry.target.service,
    targetKind: entry.target.kind,
    targetId: entry.target.id,
    actor: entry.actor,
    person: entry.person,
    relayedBy: entry.relayedBy,
    reason: entry.reason,
    value: entry.value ?? "",
    body: entry.body ?? "",
    status: entry.status,
    failure: "",
    requestKey: entry.requestKey ?? null,
    createdAt: entry.at,
    settledAt: entry.status === "applied" ? entry.at : null,
  });
  await em.flush();
  await moderationRecorded(em, moderationToProto(row));
  return row;
}

/** The record a request key made, if any. */
export function moderationByKey(em: EntityManager, requestKey: string): Promise<ModerationRow | null> {
  return em.findOne(ModerationRow, { requestKey }, { refresh: true });
}

/** A record by id. */
export function moderationById(em: EntityManager, id: string): Promise<ModerationRow | null> {
  return em.findOne(ModerationRow, { id }, { refresh: true });
}

/**
 * Settles a pending record once the other service answered: applied, or
 * failed with its problem code. A record already settled stays as it is
 * (the inline attempt and the effect may both answer); answers the record.
 */
export async function settleModeration(
  em: EntityManager,
  id: string,
  outcome: { status: "applied" } | { status: "failed"; failure: string },
  at: Date,
): Promise<ModerationRow> {
  const row = await em.findOneOrFail(ModerationRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (row.status === "pending") {
    row.status = outcome.status;
    row.failure = outcome.status === "failed" ? outcome.failure : "";
    row.settledAt = at;
    await em.flush();
  }
  return row;
}

/** The log, newest first, after a cursor (created_at, id), of one status when asked. */
export function moderationLog(
  em: EntityManager,
  status: string,
  after: [string, string] | undefined,
  limit: number,
): Promise<ModerationRow[]> {
  return em.find(
    ModerationRow,
    {
      ...(status ? { status } : {}),
      ...(after
        ? {
            $or: [{ createdAt: { $lt: new Date(after[0]) } }, { createdAt: new Date(after[0]), id: { $lt: after[1] } }],
          }
        : {}),
    },
    { orderBy: { createdAt: "desc", id: "desc" }, limit },
  );
}

export function moderationToProto(row: ModerationRow): ModerationRecord {
  return create(ModerationRecordSchema, {
    id: row.id,
    action: row.action,
    target: { service: row.targetService, kind: row.targetKind, id: row.targetId },
    actor: row.actor,
    relayedBy: row.relayedBy,
    reason: row.reason,
    status: row.status,
    failure: row.failure,
    value: row.value,
    createdAt: timestampFromDate(row.createdAt),
    settledAt: row.settledAt ? timestampFromDate(row.settledAt) : undefined,
  });
}
