import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type FilterQuery } from "@mikro-orm/postgresql";
import { StreamSchema, StreamSettingsSchema, type Stream } from "../../../gen/pf/restream/v1/streams_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { reaches, type Reach } from "../owners.js";
import { IngestKeyRow, SessionRow, StreamRow, type StoredSettings } from "./entities.js";
import { keyView } from "./keys.js";

/** A stream as it is created. */
export interface NewStream {
  id: string;
  owner: string;
  title: string;
  settings: StoredSettings;
  externalRefs: Record<string, string>;
  at: Date;
}

/** Creates a stream definition. */
export async function insertStream(em: EntityManager, stream: NewStream): Promise<StreamRow> {
  const row = em.create(StreamRow, {
    id: stream.id,
    owner: stream.owner,
    title: stream.title,
    settings: stream.settings,
    externalRefs: stream.externalRefs,
    archivedAt: null,
    createdAt: stream.at,
    updatedAt: stream.at,
  });
  await em.flush();
  return row;
}

/**
 * A stream by its id, read afresh; with `lock`, its row locked to the end of the transaction (archive, ingest
 * authorisation, rotation and writes queue on it).
 */
export async function streamById(em: EntityManager, id: string, lock = false): Promise<StreamRow | undefined> {
  const row = await em.findOne(
    StreamRow,
    { id },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true },
  );
  return row ?? undefined;
}

/** A page of the streams within reach, newest first, from before `before` (limit + 1 rows: the caller cuts). */
export async function streamsWithin(
  em: EntityManager,
  reach: Exclude<Reach, "none">,
  page: { includeArchived: boolean; before: string; limit: number },
): Promise<StreamRow[]> {
  const where: FilterQuery<StreamRow> = {};
  if (reach !== "every") where.owner = reach.owner;
  if (!page.includeArchived) where.archivedAt = null;
  if (page.before !== "") where.id = { $lt: page.before };
  return em.find(StreamRow, where, { orderBy: { id: "desc" }, limit: page.limit + 1, refresh: true });
}

/** Saves what a handler changed on a stream row. */
export async function saveStream(em: EntityManager, row: StreamRow, changes: Partial<StreamRow>): Promise<void> {
  em.assign(row, changes);
  await em.flush();
}

/**
 * Streams as answered: each with its current key's metadata (its newest key), its open session, and the ingest URLs
 * (the same for every stream). Two queries for the whole list.
 */
export async function streamViews(
  em: EntityManager,
  rows: StreamRow[],
  now: Date,
  ingestUrls: string[],
): Promise<Stream[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const keys = await em.find(IngestKeyRow, { streamId: { $in: ids } }, { orderBy: { id: "desc" }, refresh: true });
  const open = await em.find(
    SessionRow,
    { streamId: { $in: ids }, state: { $in: ["starting", "live"] } },
    { refresh: true },
  );
  return rows.map((row) => {
    const key = keys.find((each) => each.streamId === row.id);
    return create(StreamSchema, {
      id: row.id,
      owner: row.owner,
      title: row.title,
      ingestUrls,
      key: key ? keyView(key, now) : undefined,
      settings: create(StreamSettingsSchema, row.settings),
      externalRefs: row.externalRefs,
      archived: Boolean(row.archivedAt),
      archivedAt: row.archivedAt ? timestampFromDate(row.archivedAt) : undefined,
      openSessionId: open.find((session) => session.streamId === row.id)?.id ?? "",
      createdAt: timestampFromDate(row.createdAt),
      updatedAt: timestampFromDate(row.updatedAt),
    });
  });
}

/** 404 restream.stream.not_found: a stream missing, or beyond the caller's reach (another owner's answers as missing). */
export function streamNotFound(id: string) {
  return problem(404, "restream.stream.not_found", `No stream ${id}.`);
}

/** A stream within reach (its owner's, or any for a service acting for nobody), else its 404. */
export async function streamWithin(em: EntityManager, id: string, reach: Reach): Promise<StreamRow> {
  const row = await streamById(em, id);
  if (!row || !reaches(reach, row.owner)) throw streamNotFound(id);
  return row;
}

/** The acting person's own stream, its row locked with `lock`, else its 404. */
export async function ownStream(em: EntityManager, id: string, owner: string, lock = false): Promise<StreamRow> {
  const row = await streamById(em, id, lock);
  if (!row || row.owner !== owner) throw streamNotFound(id);
  return row;
}

/** The acting person's own stream, locked for a write: 409 restream.stream_archived once archived. */
export async function writableStream(em: EntityManager, id: string, owner: string): Promise<StreamRow> {
  const row = await ownStream(em, id, owner, true);
  if (row.archivedAt)
    throw problem(409, "restream.stream_archived", `The stream ${id} is archived: it takes no more writes.`);
  return row;
}
