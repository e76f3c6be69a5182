import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { problem } from "../../kit/handler/problem.js";
import { normalUsername } from "../domain/channels.js";

/** A channel as the reads see it. */
export interface ChannelSelectRow {
  owner: string;
  username: string;
  display_name: string;
  avatar_url: string;
  bio_en: string;
  last_live_at: string | null;
  live: boolean;
}

/** What network's display projection says of a subject. */
export interface SubjectFacts {
  owner: string;
  /** The normalised handle, or null when the subject has none a channel can be read by. */
  username: string | null;
  displayName: string;
  avatarUrl: string;
}

/**
 * Applies network's display projection of a subject to its channel, unless a newer one was applied: the handle
 * becomes the username (a handle another channel held before is taken from it: handles move between people).
 */
export async function applySubject(em: EntityManager, facts: SubjectFacts, at: Date): Promise<void> {
  const [current] = await sql<{ subject_at: string | null }>(
    em,
    `select subject_at from {channels} where owner = ? for update`,
    [facts.owner],
  );
  if (current?.subject_at && new Date(current.subject_at) > at) return;
  if (facts.username !== null)
    await sql(em, `update {channels} set username = null, updated_at = ? where username = ? and owner <> ?`, [
      at,
      facts.username,
      facts.owner,
    ]);
  await sql(
    em,
    `insert into {channels} (owner, username, display_name, avatar_url, bio_en, subject_at, updated_at)
     values (?, ?, ?, ?, '', ?, ?)
     on conflict (owner) do update set username = excluded.username, display_name = excluded.display_name,
       avatar_url = excluded.avatar_url, subject_at = excluded.subject_at, updated_at = excluded.updated_at`,
    [facts.owner, facts.username, facts.displayName, facts.avatarUrl, at, at],
  );
}

/** Makes an owner's channel known (a stream before network named the owner), without changing one that is. */
export async function ensureChannel(em: EntityManager, owner: string, at: Date): Promise<void> {
  await sql(
    em,
    `insert into {channels} (owner, username, display_name, avatar_url, bio_en, updated_at)
     values (?, null, '', '', '', ?) on conflict (owner) do nothing`,
    [owner, at],
  );
}

/** Marks when a channel last went live. */
export async function markLive(em: EntityManager, owner: string, at: Date): Promise<void> {
  await sql(em, `update {channels} set last_live_at = greatest(coalesce(last_live_at, ?), ?) where owner = ?`, [
    at,
    at,
    owner,
  ]);
}

/**
 * An owner's channel's username (null without one), its row locked until commit: the changes of one channel apply
 * in turn, each seeing what the one before committed.
 */
export async function lockChannel(em: EntityManager, owner: string): Promise<string | null> {
  const [row] = await sql<{ username: string | null }>(
    em,
    `select username from {channels} where owner = ? for update`,
    [owner],
  );
  return row?.username ?? null;
}

/** Sets a channel's English bio, by its owner. */
export async function setBio(em: EntityManager, owner: string, bio: string, at: Date): Promise<void> {
  await sql(em, `update {channels} set bio_en = ?, updated_at = ? where owner = ?`, [bio, at, owner]);
}

const CHANNEL_SELECT = `c.owner, c.username, c.display_name, c.avatar_url, c.bio_en, c.last_live_at,
  exists (select 1 from {streams} s where s.owner = c.owner and s.state = 'live') as live
  from {channels} c`;

const byUsername = new HotRead<ChannelSelectRow, [string]>(
  "channels.by_username",
  `select ${CHANNEL_SELECT} where c.username = $1`,
);

/**
 * A channel by username (any case); 404 channel.not_found when none, or when `owner` is given and the channel is
 * another's (another person's channel answers as a missing one).
 */
export async function requireChannel(ctx: ReadContext, username: string, owner?: string): Promise<ChannelSelectRow> {
  const [row] = await byUsername.run(ctx, normalUsername(username));
  if (!row || (owner !== undefined && row.owner !== owner))
    throw problem(404, "channel.not_found", `No channel is named ${username}.`);
  return row;
}

const byUsernames = new HotRead<ChannelSelectRow, [string[]]>(
  "channels.by_usernames",
  `select ${CHANNEL_SELECT} where c.username = any($1)`,
);

/** Channels by username, those that exist. */
export function channelsByUsername(ctx: ReadContext, usernames: string[]) {
  return byUsernames.run(ctx, usernames);
}

const recentlyLive = new HotRead<ChannelSelectRow, [Date, number]>(
  "channels.recently_live",
  `select ${CHANNEL_SELECT} where c.username is not null and c.last_live_at > $1
   order by c.last_live_at desc, c.username limit $2`,
);

/** Channels that went live after `after`, most recent first. */
export function recentlyLiveChannels(ctx: ReadContext, after: Date, rows: number) {
  return recentlyLive.run(ctx, after, rows);
}

const startedBetween = new HotRead<ChannelSelectRow, [Date, Date, number]>(
  "channels.started_between",
  `select ${CHANNEL_SELECT} where c.username is not null
   and exists (select 1 from {streams} s where s.owner = c.owner and s.started_at >= $1 and s.started_at < $2)
   order by c.username collate "C" limit $3`,
);

/** Readable channels with a stream that went live in [from, to), by username (byte order, whatever the collation). */
export function channelsStartedBetween(ctx: ReadContext, from: Date, to: Date, rows: number) {
  return startedBetween.run(ctx, from, to, rows);
}

const liveChannels = new HotRead<ChannelSelectRow, []>(
  "channels.live",
  `select ${CHANNEL_SELECT} where c.username is not null
   and exists (select 1 from {streams} s where s.owner = c.owner and s.state = 'live') order by c.username`,
);

/** The channels live now, by username. */
export function channelsLive(ctx: ReadContext) {
  return liveChannels.run(ctx);
}
