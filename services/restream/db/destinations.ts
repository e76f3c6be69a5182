import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { DestinationSchema, type Destination } from "../../../gen/pf/restream/v1/destinations_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { maskedKey } from "../domain/destination-url.js";
import { reaches, type Reach } from "../owners.js";
import { DestinationRow, type StreamRow } from "./entities.js";
import { streamById, writableStream } from "./streams.js";

/** 404 restream.destination.not_found: a destination missing, deleted, or beyond the caller's reach. */
export const destinationNotFound = (id: string) =>
  problem(404, "restream.destination.not_found", `No destination ${id}.`);

/** A destination not deleted, read afresh; with `lock`, its row locked to the end of the transaction. */
export async function destinationById(
  em: EntityManager,
  id: string,
  lock = false,
): Promise<DestinationRow | undefined> {
  const options = lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true };
  return (await em.findOne(DestinationRow, { id, deletedAt: null }, options)) ?? undefined;
}

/** A destination within reach and its stream (read afresh), else its 404 (another owner's answers as missing). */
export async function destinationWithin(
  em: EntityManager,
  id: string,
  reach: Reach,
): Promise<{ destination: DestinationRow; stream: StreamRow }> {
  const destination = await destinationById(em, id);
  const stream = destination && (await streamById(em, destination.streamId));
  if (!destination || !stream || !reaches(reach, stream.owner)) throw destinationNotFound(id);
  return { destination, stream };
}

/**
 * The acting person's own destination for a write: its stream's row locked first (the lock archive and ingest take;
 * 409 restream.stream_archived once archived), then its own, read again (404 once deleted meanwhile).
 */
export async function writableDestination(
  em: EntityManager,
  id: string,
  owner: string,
): Promise<{ destination: DestinationRow; stream: StreamRow }> {
  const { destination } = await destinationWithin(em, id, { owner });
  const stream = await writableStream(em, destination.streamId, owner);
  const locked = await destinationById(em, id, true);
  if (!locked) throw destinationNotFound(id);
  return { destination: locked, stream };
}

/** A stream's destinations not deleted, oldest first. */
export function destinationsOfStream(em: EntityManager, streamId: string): Promise<DestinationRow[]> {
  return em.find(DestinationRow, { streamId, deletedAt: null }, { orderBy: { id: "asc" } });
}

/** The destinations a new session of the stream pushes on its own: enabled ones, when its auto_start_outputs is on. */
export async function autoStartDestinations(em: EntityManager, streamId: string): Promise<DestinationRow[]> {
  const stream = await streamById(em, streamId);
  if (!stream?.settings.autoStartOutputs) return [];
  return em.find(DestinationRow, { streamId, enabled: true, deletedAt: null }, { orderBy: { id: "asc" } });
}

/** A destination by id whether deleted or not (an output's order needs its URL and key while it runs). */
export function destinationOfOutput(em: EntityManager, id: string): Promise<DestinationRow | null> {
  return em.findOne(DestinationRow, { id });
}

/** Stores a new destination. */
export async function insertDestination(
  em: EntityManager,
  data: RequiredEntityData<DestinationRow>,
): Promise<DestinationRow> {
  const row = em.create(DestinationRow, data);
  await em.flush();
  return row;
}

/** Writes the changes made to destination rows. */
export async function saveDestinations(em: EntityManager): Promise<void> {
  await em.flush();
}

/** A destination as reads answer it: the key masked, the passphrase only as set or not, never either secret. */
export function destinationToProto(row: DestinationRow): Destination {
  return create(DestinationSchema, {
    id: row.id,
    streamId: row.streamId,
    name: row.name,
    url: row.url,
    streamKeyMasked: row.streamKeySealed === "" ? "" : maskedKey(row.streamKeyHint),
    passphraseSet: row.passphraseSealed !== "",
    enabled: row.enabled,
    lastTest: row.lastTest
      ? { ok: row.lastTest.ok, reason: row.lastTest.reason, at: timestampFromDate(new Date(row.lastTest.at)) }
      : undefined,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}
