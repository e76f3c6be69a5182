import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";

/** A moment as the feed reads it, with its channel's username. */
export interface MomentSelectRow {
  id: string;
  text: string;
  stream_id: string;
  clip_id: string;
  at: string;
  username: string;
}

/** Adds an AI moment of an owner's channel. */
export async function insertMoment(
  em: EntityManager,
  moment: { id: string; owner: string; text: string; streamId: string; clipId: string },
  at: Date,
): Promise<void> {
  await sql(em, `insert into {moments} (id, owner, text, stream_id, clip_id, at) values (?, ?, ?, ?, ?, ?)`, [
    moment.id,
    moment.owner,
    moment.text,
    moment.streamId,
    moment.clipId,
    at,
  ]);
}

const publicMoments = new HotRead<MomentSelectRow, [number]>(
  "moments.public",
  `select m.id, m.text, m.stream_id, m.clip_id, m.at, c.username from {moments} m
   join {channels} c on c.owner = m.owner
   where c.username is not null
     and (m.clip_id = '' or exists (select 1 from {recordings} r
          where r.kind = 'clip' and r.id = m.clip_id and r.owner = m.owner and r.listing = 'public'))
   order by m.at desc, m.id desc limit $1`,
);

/** Moments of readable channels whose clip (if any) is public, newest first. */
export function momentsFeed(ctx: ReadContext, rows: number) {
  return publicMoments.run(ctx, rows);
}

/** Writes one curation entry (the featured rotation, a day's star or digest). */
export async function putCuration(em: EntityManager, name: string, body: object, at: Date): Promise<void> {
  await sql(
    em,
    `insert into {curation} (name, body, updated_at) values (?, ?, ?)
     on conflict (name) do update set body = excluded.body, updated_at = excluded.updated_at`,
    [name, JSON.stringify(body), at],
  );
}

const curationByName = new HotRead<{ name: string; body: Record<string, unknown> }, [string]>(
  "curation.by_name",
  `select name, body from {curation} where name = $1`,
);

/** A curation entry's body; undefined when none. */
export async function readCuration(ctx: ReadContext, name: string) {
  return (await curationByName.run(ctx, name))[0]?.body;
}

const newestBefore = new HotRead<{ name: string; body: Record<string, unknown> }, [string, string]>(
  "curation.newest_before",
  `select name, body from {curation} where name like $1 and name <= $2 order by name desc limit 1`,
);

/** The newest entry of a day-named kind (`digest:`) on or before a day; undefined when none. */
export async function newestCurationUpTo(ctx: ReadContext, prefix: string, day: string) {
  return (await newestBefore.run(ctx, `${prefix}%`, `${prefix}${day}`))[0]?.body;
}

/** The home numbers as one row. */
export interface HomeNumbers {
  live_channels: number;
  viewers: number;
  streams_today: number;
}

const home = new HotRead<HomeNumbers, [Date, Date]>(
  "stats.home",
  `select
     (select count(distinct owner) from {streams} where state = 'live')::int as live_channels,
     (select count(distinct v.viewer) from {viewers} v join {streams} s on s.id = v.stream_id
      where s.state = 'live' and v.seen_at > $1)::int as viewers,
     (select count(*) from {streams} where started_at >= $2)::int as streams_today`,
);

/** Channels live now, distinct viewers of live streams seen since `since`, streams started since `dayStart`. */
export async function homeNumbers(ctx: ReadContext, since: Date, dayStart: Date): Promise<HomeNumbers> {
  return (await home.run(ctx, since, dayStart))[0];
}
