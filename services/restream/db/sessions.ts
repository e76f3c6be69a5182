import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type FilterQuery } from "@mikro-orm/postgresql";
import { MediaInfoSchema, PlaybackDescriptorSchema } from "../../../gen/pf/restream/v1/events_pb.js";
import { SessionSchema, type Session } from "../../../gen/pf/restream/v1/sessions_pb.js";
import { OPEN_STATES, playbackNow, type Playback } from "../domain/sessions.js";
import { reaches, type Reach } from "../owners.js";
import { problem } from "../../kit/handler/problem.js";
import { SessionRow } from "./entities.js";
import { keysById } from "./keys.js";

/** A session as the ingest authorisation opens it: `starting`, on a worker generation, with the key it used. */
export interface NewSession {
  id: string;
  streamId: string;
  owner: string;
  keyId: string;
  workerId: string;
  generation: number;
  remoteAddress: string;
  at: Date;
}

/** Opens a session (the caller holds the stream's lock and found none open). */
export async function insertSession(em: EntityManager, session: NewSession): Promise<SessionRow> {
  const row = em.create(SessionRow, {
    id: session.id,
    streamId: session.streamId,
    owner: session.owner,
    keyId: session.keyId,
    workerId: session.workerId,
    generation: session.generation,
    state: "starting",
    media: null,
    recording: "off",
    playback: null,
    remoteAddress: session.remoteAddress,
    startedAt: session.at,
    liveAt: null,
    endedAt: null,
    endReason: "",
  });
  await em.flush();
  return row;
}

/** A session by its id, read afresh; with `lock`, its row locked to the end of the transaction. */
export async function sessionById(em: EntityManager, id: string, lock = false): Promise<SessionRow | undefined> {
  const row = await em.findOne(
    SessionRow,
    { id },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true },
  );
  return row ?? undefined;
}

/** The stream's open session, if any (at most one: sessions_one_open). */
export async function openSessionOf(
  em: EntityManager,
  streamId: string,
  lock = false,
): Promise<SessionRow | undefined> {
  const row = await em.findOne(
    SessionRow,
    { streamId, state: { $in: [...OPEN_STATES] } },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true },
  );
  return row ?? undefined;
}

/**
 * The open sessions a worker holds under a generation other than `generation` (all of them when undefined), locked:
 * what its new registration or its loss interrupts.
 */
export async function openSessionsOfWorker(
  em: EntityManager,
  workerId: string,
  otherThan?: number,
): Promise<SessionRow[]> {
  const where: FilterQuery<SessionRow> = { workerId, state: { $in: [...OPEN_STATES] } };
  if (otherThan !== undefined) where.generation = { $ne: otherThan };
  return em.find(SessionRow, where, { orderBy: { id: "asc" }, lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** A page of the sessions within reach, newest first (limit + 1 rows: the caller cuts). */
export async function sessionsWithin(
  em: EntityManager,
  reach: Exclude<Reach, "none">,
  page: { streamId: string; state: string; before: string; limit: number },
): Promise<SessionRow[]> {
  const where: FilterQuery<SessionRow> = {};
  if (reach !== "every") where.owner = reach.owner;
  if (page.streamId !== "") where.streamId = page.streamId;
  if (page.state === "open") where.state = { $in: [...OPEN_STATES] };
  else if (page.state !== "") where.state = page.state;
  if (page.before !== "") where.id = { $lt: page.before };
  return em.find(SessionRow, where, { orderBy: { id: "desc" }, limit: page.limit + 1, refresh: true });
}

/** Saves what a transition changed on a session row. */
export async function saveSession(em: EntityManager, row: SessionRow, changes: Partial<SessionRow>): Promise<void> {
  em.assign(row, changes);
  await em.flush();
}

/** Sessions as answered, with the hint of the key each was opened with (one query for the list). */
export async function sessionViews(em: EntityManager, rows: SessionRow[]): Promise<Session[]> {
  const keys = await keysById(
    em,
    rows.map((row) => row.keyId),
  );
  return rows.map((row) =>
    create(SessionSchema, {
      id: row.id,
      streamId: row.streamId,
      owner: row.owner,
      state: row.state,
      workerId: row.workerId,
      generation: row.generation,
      keyHint: keys.get(row.keyId)?.hint ?? "",
      media: row.media ? create(MediaInfoSchema, row.media) : undefined,
      recording: row.recording,
      playback: create(PlaybackDescriptorSchema, playbackNow(row.state, row.playback as Playback | null)),
      startedAt: timestampFromDate(row.startedAt),
      liveAt: row.liveAt ? timestampFromDate(row.liveAt) : undefined,
      endedAt: row.endedAt ? timestampFromDate(row.endedAt) : undefined,
      endReason: row.endReason,
    }),
  );
}

/** A session within reach, else 404 restream.session.not_found (another owner's answers as a missing one). */
export async function sessionWithin(em: EntityManager, id: string, reach: Reach, lock = false): Promise<SessionRow> {
  const row = await sessionById(em, id, lock);
  if (!row || !reaches(reach, row.owner)) throw problem(404, "restream.session.not_found", `No session ${id}.`);
  return row;
}
