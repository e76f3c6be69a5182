import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { IngestKeySchema, type IngestKey } from "../../../gen/pf/restream/v1/streams_pb.js";
import { keyStatusAt } from "../domain/keys.js";
import { IngestKeyRow } from "./entities.js";

/** Stores a key of a stream by its hash and hint (the key itself never). */
export async function insertKey(
  em: EntityManager,
  key: { id: string; streamId: string; keyHash: string; hint: string; at: Date },
): Promise<IngestKeyRow> {
  const row = em.create(IngestKeyRow, {
    id: key.id,
    streamId: key.streamId,
    keyHash: key.keyHash,
    hint: key.hint,
    createdAt: key.at,
    revokedAt: null,
  });
  await em.flush();
  return row;
}

/** A stream's keys, newest first (the first is its current key). */
export async function keysOf(em: EntityManager, streamId: string): Promise<IngestKeyRow[]> {
  return em.find(IngestKeyRow, { streamId }, { orderBy: { id: "desc" }, refresh: true });
}

/** The key a worker asks about, by its hash. */
export async function keyByHash(em: EntityManager, keyHash: string): Promise<IngestKeyRow | undefined> {
  return (await em.findOne(IngestKeyRow, { keyHash }, { refresh: true })) ?? undefined;
}

/** The keys by id (their hints for sessions). */
export async function keysById(em: EntityManager, ids: string[]): Promise<Map<string, IngestKeyRow>> {
  const rows = ids.length === 0 ? [] : await em.find(IngestKeyRow, { id: { $in: [...new Set(ids)] } });
  return new Map(rows.map((row) => [row.id, row]));
}

/** Sets when a key stops working; a key already revoked earlier keeps its earlier moment. */
export async function revokeKey(em: EntityManager, row: IngestKeyRow, at: Date): Promise<void> {
  if (row.revokedAt && row.revokedAt.getTime() <= at.getTime()) return;
  row.revokedAt = at;
  await em.flush();
}

/** A key's metadata as answered: its hint and status at `now`, never the key. */
export function keyView(row: IngestKeyRow, now: Date): IngestKey {
  const status = keyStatusAt(row.revokedAt, now);
  return create(IngestKeySchema, {
    id: row.id,
    hint: row.hint,
    status,
    createdAt: timestampFromDate(row.createdAt),
    graceEndsAt: status === "grace" ? timestampFromDate(row.revokedAt!) : undefined,
    revokedAt: status === "revoked" ? timestampFromDate(row.revokedAt!) : undefined,
  });
}
