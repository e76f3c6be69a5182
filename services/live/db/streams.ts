import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { newId } from "../../kit/handler/ids.js";
import { nextState, type StreamState } from "../domain/streams.js";
import { STREAM_SELECT, type StreamSelectRow } from "./rows.js";

/** What a restream session event says, as live keeps it (never its external refs beyond the slot). */
export interface SessionFacts {
  sessionId: string;
  owner: string;
  title: string;
  state: string;
  playbackProtocol: string;
  playbackUrl: string;
  videoCodec: string;
  width: number;
  height: number;
  fps: number;
  audioCodec: string;
  slotId: string;
  startedAt: Date | null;
  endedAt: Date | null;
  endReason: string;
}

/** What applying a session event did: the stream, and its state before (absent when new). */
export interface Applied {
  id: string;
  owner: string;
  title: string;
  before?: StreamState;
  after: StreamState;
  startedAt: Date | null;
  endedAt: Date | null;
}

interface StoredState {
  id: string;
  state: StreamState;
  started_at: string | Date | null;
  ended_at: string | Date | null;
}

/**
 * Applies one restream session event to its stream, locked by session: a new session makes the stream, a later
 * event moves it on (an end is final, `nextState`); facts already known are kept when an event lacks them.
 */
export async function applySession(em: EntityManager, facts: SessionFacts, at: Date): Promise<Applied> {
  const [stored] = await sql<StoredState>(
    em,
    `select id, state, started_at, ended_at from {streams} where session_id = ? for update`,
    [facts.sessionId],
  );
  const after = nextState(stored?.state, facts.state);
  const live = after === "live";
  const startedAt = stored?.started_at ? new Date(stored.started_at) : facts.startedAt;
  const endedAt = stored?.ended_at ? new Date(stored.ended_at) : live ? null : (facts.endedAt ?? at);
  const values = {
    title: facts.title,
    state: after,
    protocol: live ? facts.playbackProtocol : "none",
    url: live ? facts.playbackUrl : "",
  };
  if (!stored) {
    const id = newId("lvs");
    await sql(
      em,
      `insert into {streams} (id, session_id, owner, title, state, playback_protocol, playback_url, video_codec,
         width, height, fps, audio_codec, slot_id, started_at, ended_at, end_reason, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        facts.sessionId,
        facts.owner,
        values.title,
        after,
        values.protocol,
        values.url,
        facts.videoCodec,
        facts.width,
        facts.height,
        facts.fps,
        facts.audioCodec,
        facts.slotId,
        startedAt,
        endedAt,
        live ? "" : facts.endReason,
        at,
      ],
    );
    return { id, owner: facts.owner, title: facts.title, after, startedAt, endedAt };
  }
  // A late started event after the end changes nothing but what it alone knows (the start time).
  const ended = stored.state !== "live";
  await sql(
    em,
    `update {streams} set title = case when ? then title else ? end, state = ?,
       playback_protocol = case when ? then playback_protocol else ? end,
       playback_url = case when ? then playback_url else ? end,
       video_codec = case when ? = '' then video_codec else ? end,
       width = greatest(width, ?), height = greatest(height, ?), fps = greatest(fps, ?),
       audio_codec = case when ? = '' then audio_codec else ? end,
       started_at = ?, ended_at = ?,
       end_reason = case when end_reason = '' and ? <> 'live' then ? else end_reason end, updated_at = ?
     where id = ?`,
    [
      ended,
      values.title,
      after,
      ended && live,
      values.protocol,
      ended && live,
      values.url,
      facts.videoCodec,
      facts.videoCodec,
      facts.width,
      facts.height,
      facts.fps,
      facts.audioCodec,
      facts.audioCodec,
      startedAt,
      endedAt,
      after,
      facts.endReason,
      at,
      stored.id,
    ],
  );
  return { id: stored.id, owner: facts.owner, title: facts.title, before: stored.state, after, startedAt, endedAt };
}

/** The owner of a stream, for a VOD or clip of it; null when there is none. */
export async function streamOwner(em: EntityManager, id: string): Promise<string | null> {
  const [row] = await sql<{ owner: string }>(em, `select owner from {streams} where id = ?`, [id]);
  return row?.owner ?? null;
}

const byId = new HotRead<StreamSelectRow, [Date, boolean, string]>(
  "streams.by_id",
  `select ${STREAM_SELECT} where s.id = $3`,
);

/** One stream, with viewers seen since `since` and its VOD (a private one when `privateToo`). */
export async function readStream(ctx: ReadContext, id: string, since: Date, privateToo: boolean) {
  return (await byId.run(ctx, since, privateToo, id))[0];
}

const liveOf = new HotRead<StreamSelectRow, [Date, boolean, string]>(
  "streams.live_of_owner",
  `select ${STREAM_SELECT} where s.owner = $3 and s.state = 'live' order by s.started_at desc limit 10`,
);

/** The streams live now on an owner's channel. */
export function liveStreamsOf(ctx: ReadContext, owner: string, since: Date, privateToo: boolean) {
  return liveOf.run(ctx, since, privateToo, owner);
}

const liveNow = new HotRead<StreamSelectRow, [Date, boolean, number, number]>(
  "streams.live",
  `select * from (select ${STREAM_SELECT} where s.state = 'live') live
   order by viewer_count desc, started_at desc, id desc offset $3 limit $4`,
);

/** Who is live, most viewers first: `rows` from `offset`, with public VODs only (everyone reads this list). */
export function liveStreams(ctx: ReadContext, since: Date, offset: number, rows: number) {
  return liveNow.run(ctx, since, false, offset, rows);
}

const endedRecently = new HotRead<StreamSelectRow, [Date, boolean, Date, string, number]>(
  "streams.ended",
  `select ${STREAM_SELECT} where s.state <> 'live' and s.ended_at is not null and (s.ended_at, s.id) < ($3, $4)
   order by s.ended_at desc, s.id desc limit $5`,
);

/** Recently ended streams, newest end first, before a (time, id) position, with their public VOD. */
export function endedStreams(ctx: ReadContext, since: Date, before: { at: Date; id: string }, rows: number) {
  return endedRecently.run(ctx, since, false, before.at, before.id, rows);
}

const newest = new HotRead<StreamSelectRow, [Date, boolean, Date, number]>(
  "streams.started",
  `select ${STREAM_SELECT} where s.state = 'live' and c.username is not null and s.started_at > $3
   order by s.started_at desc, s.id desc limit $4`,
);

/** Streams live now on readable channels that went live after `after`, newest first (the home pulse: live-only). */
export function startedStreams(ctx: ReadContext, since: Date, after: Date, rows: number) {
  return newest.run(ctx, since, false, after, rows);
}
