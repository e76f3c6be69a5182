import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { RecordingSelectRow, SlotSelectRow } from "./rows.js";

/** A slot as its owner writes it. */
export interface SlotFacts {
  id: string;
  owner: string;
  title: string;
  startsAt: Date;
  endsAt: Date;
  listing: string;
}

/**
 * Writes a slot (the owner's id: writing it again replaces it); answers whether it was new, or null when the id is
 * another owner's slot (nothing written).
 */
export async function putSlot(em: EntityManager, slot: SlotFacts, at: Date): Promise<boolean | null> {
  const rows = await sql<{ owner: string; created: boolean }>(
    em,
    `insert into {slots} (id, owner, title, starts_at, ends_at, listing, updated_at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do update set title = excluded.title, starts_at = excluded.starts_at,
       ends_at = excluded.ends_at, listing = excluded.listing, updated_at = excluded.updated_at
       where {slots}.owner = excluded.owner
     returning owner, (xmax = 0) as created`,
    [slot.id, slot.owner, slot.title, slot.startsAt, slot.endsAt, slot.listing, at],
  );
  return rows.length === 0 ? null : rows[0].created;
}

/** Removes an owner's slot; another owner's is left alone. */
export async function deleteSlot(em: EntityManager, owner: string, id: string): Promise<void> {
  await sql(em, `delete from {slots} where id = ? and owner = ?`, [id, owner]);
}

const SLOT_SELECT = `sl.id, sl.title, sl.starts_at, sl.ends_at, sl.listing,
  (select s.id from {streams} s where s.slot_id = sl.id and s.owner = sl.owner and s.state = 'live'
   order by s.started_at desc limit 1) as current_stream_id
  from {slots} sl`;

const slotsOfOwner = new HotRead<SlotSelectRow, [string, Date, boolean]>(
  "slots.of_owner",
  `select ${SLOT_SELECT} where sl.owner = $1 and sl.ends_at > $2 and (sl.listing = 'public' or $3)
   order by sl.starts_at, sl.id limit 50`,
);

/** An owner's slots not yet ended, soonest first (unlisted ones when `privateToo`). */
export function slotsOf(ctx: ReadContext, owner: string, now: Date, privateToo: boolean) {
  return slotsOfOwner.run(ctx, owner, now, privateToo);
}

const slotById = new HotRead<SlotSelectRow & { owner: string }, [string]>(
  "slots.by_id",
  `select sl.owner, ${SLOT_SELECT} where sl.id = $1`,
);

/** One slot with its owner; undefined when none. */
export async function readSlot(ctx: ReadContext, id: string) {
  return (await slotById.run(ctx, id))[0];
}

/** An upcoming public slot, with its channel. */
export type UpcomingRow = SlotSelectRow & { username: string };

const upcomingPublic = new HotRead<UpcomingRow, [Date, Date, number]>(
  "slots.upcoming",
  `select c.username, ${SLOT_SELECT} join {channels} c on c.owner = sl.owner
   where sl.listing = 'public' and c.username is not null and sl.starts_at >= $1 and sl.starts_at < $2
   order by sl.starts_at, sl.id limit $3`,
);

/** Public slots of readable channels starting between `from` and `to`, soonest first. */
export function upcomingSlots(ctx: ReadContext, from: Date, to: Date, rows: number) {
  return upcomingPublic.run(ctx, from, to, rows);
}

/** A VOD or clip as the service that made it registers it. */
export interface RecordingFacts {
  kind: "vod" | "clip";
  id: string;
  streamId: string;
  owner: string;
  title: string;
  url: string;
  durationSeconds: number;
  listing: string;
  takenBy: string;
}

/**
 * Writes a VOD or clip (again: replaced, keeping when it was first registered); answers it and whether it was new,
 * or undefined when the id is held for another stream (or owner): nothing written.
 */
export async function putRecording(
  em: EntityManager,
  recording: RecordingFacts,
  at: Date,
): Promise<(RecordingSelectRow & { created: boolean }) | undefined> {
  const [row] = await sql<RecordingSelectRow & { created: boolean }>(
    em,
    `insert into {recordings} (kind, id, stream_id, owner, title, url, duration_seconds, listing, taken_by, at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (kind, id) do update set title = excluded.title, url = excluded.url,
       duration_seconds = excluded.duration_seconds, listing = excluded.listing, taken_by = excluded.taken_by
       where {recordings}.stream_id = excluded.stream_id and {recordings}.owner = excluded.owner
     returning id, stream_id, title, url, duration_seconds, listing, at, taken_by, (xmax = 0) as created`,
    [
      recording.kind,
      recording.id,
      recording.streamId,
      recording.owner,
      recording.title,
      recording.url,
      recording.durationSeconds,
      recording.listing,
      recording.takenBy,
      at,
    ],
  );
  return row;
}

/** A recording with its channel's username and, for a clip, its taker's. */
export type RecordingWithChannel = RecordingSelectRow & { kind: string; owner: string; username: string };

const RECORDING_SELECT = `r.kind, r.id, r.stream_id, r.owner, r.title, r.url, r.duration_seconds, r.listing, r.at,
  coalesce(c.username, '') as username, coalesce(t.username, '') as taken_by
  from {recordings} r
  left join {channels} c on c.owner = r.owner
  left join {channels} t on t.owner = r.taken_by`;

const ofOwner = new HotRead<RecordingWithChannel, [string, string, boolean, number]>(
  "recordings.of_owner",
  `select ${RECORDING_SELECT} where r.owner = $1 and r.kind = $2 and (r.listing = 'public' or $3)
   order by r.at desc, r.id desc limit $4`,
);

/** An owner's VODs or clips, newest first (private ones when `privateToo`). */
export function recordingsOf(ctx: ReadContext, owner: string, kind: "vod" | "clip", privateToo: boolean, rows: number) {
  return ofOwner.run(ctx, owner, kind, privateToo, rows);
}

const publicNewest = new HotRead<RecordingWithChannel, [number]>(
  "recordings.public",
  `select ${RECORDING_SELECT} where r.listing = 'public' and c.username is not null
   order by r.at desc, r.id desc limit $1`,
);

/** Public VODs and clips of readable channels, newest first (the content feed). */
export function publicRecordings(ctx: ReadContext, rows: number) {
  return publicNewest.run(ctx, rows);
}
