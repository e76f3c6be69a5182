import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { sql } from "../../kit/db/sql.js";

/** A story's state. */
export type StoryState = "draft" | "published" | "unpublished" | "retracted";

/** A story as stored. */
export interface StoryRecord {
  id: string;
  cluster_id: string;
  state: StoryState;
  latest_revision: number;
  published_revision: number | null;
  next_source_number: number;
  version: number;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  retraction_note: string | null;
  retracted_by: string | null;
  retracted_at: Date | null;
}

/** A source table entry with its item as news holds it now. */
export interface SourceRecord {
  story_id: string;
  number: number;
  item_id: string;
  perspective_id: string | null;
  attached_by: string | null;
  attached_at: Date;
  detached_by: string | null;
  detached_at: Date | null;
  title: string;
  canonical_url: string;
  source_key: string;
  removed_upstream: boolean;
}

/** A perspective grouping as stored. */
export interface PerspectiveRecord {
  id: string;
  story_id: string;
  label: string;
  created_by: string;
  created_at: Date;
}

/** A timeline entry as stored. */
export interface TimelineRecord {
  id: string;
  story_id: string;
  stated_date: string;
  text: string;
  source_number: number;
  created_by: string;
  created_at: Date;
}

/** Opens a story with its first sources, numbered 1, 2, … in the order given. */
export async function insertStory(
  em: EntityManager,
  story: { cluster: string; by: string; items: string[]; at: Date },
): Promise<string> {
  const id = newId("sty");
  await sql(
    em,
    `insert into {stories} (id, cluster_id, state, latest_revision, next_source_number, version, created_by,
       created_at, updated_at) values (?, ?, 'draft', 0, ?, 1, ?, ?, ?)`,
    [id, story.cluster, story.items.length + 1, story.by, story.at, story.at],
  );
  for (const [index, item] of story.items.entries())
    await sql(em, `insert into {story_sources} (story_id, number, item_id, attached_at) values (?, ?, ?, ?)`, [
      id,
      index + 1,
      item,
      story.at,
    ]);
  return id;
}

/** A story, unlocked; undefined when missing. */
export async function storyById(em: EntityManager, id: string): Promise<StoryRecord | undefined> {
  const [row] = await sql<StoryRecord>(em, `select * from {stories} where id = ?`, [id]);
  return row;
}

/**
 * A story locked to the end of the transaction (every write to a story's
 * numbers and revisions goes through this lock, so concurrent attaches number
 * one after the other); 404 when missing, 409 story.retracted once retracted
 * unless `retracted` allows it.
 */
export async function lockStory(em: EntityManager, id: string, options: { retracted?: boolean } = {}) {
  const [row] = await sql<StoryRecord>(em, `select * from {stories} where id = ? for update`, [id]);
  if (!row) throw problem(404, "story.not_found", "No such story.");
  if (row.state === "retracted" && !options.retracted)
    throw problem(409, "story.retracted", "The story is retracted: retraction is final.");
  return row;
}

/** Counts a change of the story (its search document revision follows it). */
export async function touchStory(em: EntityManager, id: string, at: Date, set: Partial<StoryRecord> = {}) {
  const columns = Object.keys(set);
  await sql(
    em,
    `update {stories} set ${columns.map((column) => `${column} = ?, `).join("")}version = version + 1, updated_at = ?
     where id = ?`,
    [...columns.map((column) => set[column as keyof StoryRecord]), at, id],
  );
}

/** A page of stories, newest first; `states` limits what non-editors see. */
export function storyPage(
  em: EntityManager,
  options: { states?: StoryState[]; before?: string; limit: number },
): Promise<StoryRecord[]> {
  const where = ["true"];
  const params: unknown[] = [];
  if (options.states) {
    where.push("state in (?)");
    params.push(options.states);
  }
  if (options.before) {
    where.push("id < ?");
    params.push(options.before);
  }
  return sql<StoryRecord>(em, `select * from {stories} where ${where.join(" and ")} order by id desc limit ?`, [
    ...params,
    options.limit + 1,
  ]);
}

/** A story's source table with each item as news holds it now, by number. */
export function sourcesOf(em: EntityManager, story: string): Promise<SourceRecord[]> {
  return sql<SourceRecord>(
    em,
    `select s.*, i.title, i.canonical_url, i.source_key, (i.removed_at is not null) as removed_upstream
     from {story_sources} s join {source_items} i on i.id = s.item_id where s.story_id = ? order by s.number`,
    [story],
  );
}

/** Gives an item the story's next number (call under the story's lock); answers the number. */
export async function attachSource(em: EntityManager, story: StoryRecord, item: string, by: string | null, at: Date) {
  const number = story.next_source_number;
  await sql(
    em,
    `insert into {story_sources} (story_id, number, item_id, attached_by, attached_at) values (?, ?, ?, ?, ?)`,
    [story.id, number, item, by, at],
  );
  await touchStory(em, story.id, at, { next_source_number: number + 1 });
  return number;
}

/** Detaches an entry: its number stays taken; it leaves its perspective grouping. */
export async function detachSource(em: EntityManager, story: string, number: number, by: string | null, at: Date) {
  await sql(
    em,
    `update {story_sources} set detached_by = ?, detached_at = ?, perspective_id = null where story_id = ? and number = ?`,
    [by, at, story, number],
  );
  await touchStory(em, story, at);
}

/** Puts an entry in a grouping (null: none). */
export async function setPerspective(em: EntityManager, story: string, number: number, perspective: string | null) {
  await sql(em, `update {story_sources} set perspective_id = ? where story_id = ? and number = ?`, [
    perspective,
    story,
    number,
  ]);
}

/** The live perspective groupings of a story, oldest first. */
export function perspectivesOf(em: EntityManager, story: string): Promise<PerspectiveRecord[]> {
  return sql<PerspectiveRecord>(
    em,
    `select * from {story_perspectives} where story_id = ? and deleted_at is null order by id`,
    [story],
  );
}

/** Creates a grouping; answers its id. */
export async function insertPerspective(em: EntityManager, story: string, label: string, by: string, at: Date) {
  const id = newId("psp");
  await sql(
    em,
    `insert into {story_perspectives} (id, story_id, label, created_by, created_at) values (?, ?, ?, ?, ?)`,
    [id, story, label, by, at],
  );
  return id;
}

/** Deletes a grouping and ungroups its sources; answers whether it existed. */
export async function deletePerspective(em: EntityManager, story: string, id: string, at: Date): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `update {story_perspectives} set deleted_at = ? where id = ? and story_id = ? and deleted_at is null returning id`,
    [at, id, story],
  );
  if (rows.length === 0) return false;
  await sql(em, `update {story_sources} set perspective_id = null where story_id = ? and perspective_id = ?`, [
    story,
    id,
  ]);
  return true;
}

/** The live timeline of a story, by date as stated, then creation. */
export function timelineOf(em: EntityManager, story: string): Promise<TimelineRecord[]> {
  return sql<TimelineRecord>(
    em,
    `select * from {story_timeline} where story_id = ? and deleted_at is null order by stated_date, id`,
    [story],
  );
}

/** Adds a timeline entry; answers its id. */
export async function insertTimelineEntry(
  em: EntityManager,
  entry: { story: string; date: string; text: string; source: number; by: string; at: Date },
) {
  const id = newId("tle");
  await sql(
    em,
    `insert into {story_timeline} (id, story_id, stated_date, text, source_number, created_by, created_at)
     values (?, ?, ?, ?, ?, ?, ?)`,
    [id, entry.story, entry.date, entry.text, entry.source, entry.by, entry.at],
  );
  return id;
}

/** Deletes a timeline entry; answers whether it existed. */
export async function deleteTimelineEntry(em: EntityManager, story: string, id: string, at: Date): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `update {story_timeline} set deleted_at = ? where id = ? and story_id = ? and deleted_at is null returning id`,
    [at, id, story],
  );
  return rows.length > 0;
}

/** The stories with a live entry for an item (to flag upstream changes). */
export function storiesCiting(
  em: EntityManager,
  item: string,
): Promise<{ story_id: string; number: number; state: StoryState }[]> {
  return sql(
    em,
    `select s.story_id, s.number, t.state from {story_sources} s join {stories} t on t.id = s.story_id
     where s.item_id = ? and s.detached_at is null and t.state <> 'retracted'`,
    [item],
  );
}
