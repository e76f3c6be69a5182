import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { nextRevisionNumber } from "../../kit/revisions/immutable.js";
import { PostRow, RevisionRow, ReviewRow, ScheduleRow } from "./entities.js";

/** Where the kit numbers a post's revisions (under the post row's lock). */
const REVISION_TABLES = { parent: "posts", revisions: "post_revisions", parentColumn: "post_id" };

/** The slug scope of a blog's posts. */
export const slugScope = (blogId: string) => `posts:${blogId}`;

/** A post; `lock` takes its row for the transaction, so writes on one post run one after the other. */
export function postById(em: EntityManager, id: string, lock = false): Promise<PostRow | null> {
  return em.findOne(PostRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

export async function insertPost(em: EntityManager, row: PostRow): Promise<void> {
  await em.insert(PostRow, row);
}

/** Writes the changes and applies them to `row` (what the handler answers from). */
export async function updatePost(em: EntityManager, row: PostRow, changes: Partial<PostRow>): Promise<void> {
  await em.nativeUpdate(PostRow, { id: row.id }, changes);
  Object.assign(row, changes);
}

/** Inserts the post's next revision (numbered under the post row's lock) and answers its number. */
export async function appendRevision(em: EntityManager, row: Omit<RevisionRow, "n">): Promise<number> {
  const n = await nextRevisionNumber(em, REVISION_TABLES, row.postId);
  if (n === undefined) throw new Error(`post ${row.postId} vanished while locked`);
  await em.insert(RevisionRow, { ...row, n });
  return n;
}

export function revisionOf(em: EntityManager, postId: string, n: number): Promise<RevisionRow | null> {
  return em.findOne(RevisionRow, { postId, n });
}

/** The revisions numbered; without their bodies (left unread, not answered) for a listing. */
export function revisionsOf(em: EntityManager, postId: string, ns: number[], withBody = true): Promise<RevisionRow[]> {
  return em.find(RevisionRow, { postId, n: { $in: ns } }, withBody ? {} : { exclude: ["body"] }) as Promise<
    RevisionRow[]
  >;
}

/** A page of a post's revisions, newest first, before `before` (exclusive), without their bodies (a listing). */
export function revisionPage(em: EntityManager, postId: string, before: number, limit: number): Promise<RevisionRow[]> {
  const rows = em.find(
    RevisionRow,
    { postId, n: { $lt: before } },
    { orderBy: { n: "desc" }, limit, exclude: ["body"] },
  );
  return rows as Promise<RevisionRow[]>;
}

export async function insertReview(em: EntityManager, row: ReviewRow): Promise<void> {
  await em.insert(ReviewRow, row);
}

/** The review that counts for each revision: the newest. */
export async function latestReviews(em: EntityManager, postId: string, ns: number[]): Promise<Map<number, ReviewRow>> {
  const rows = await em.find(ReviewRow, { postId, revision: { $in: ns } }, { orderBy: { at: "asc", id: "asc" } });
  return new Map(rows.map((row) => [row.revision, row]));
}

export function pendingSchedules(em: EntityManager, postIds: string[]): Promise<ScheduleRow[]> {
  return em.find(ScheduleRow, { postId: { $in: postIds }, state: "pending" }, { orderBy: { at: "asc" } });
}

export function scheduleByKey(
  em: EntityManager,
  key: { postId: string; action: string; at: Date; revision: number },
): Promise<ScheduleRow | null> {
  return em.findOne(ScheduleRow, key);
}

export async function insertSchedule(em: EntityManager, row: ScheduleRow): Promise<void> {
  await em.insert(ScheduleRow, row);
}

/** Cancels a post's pending schedules (of one action, when given) and answers them as they were. */
export async function cancelSchedules(
  em: EntityManager,
  postId: string,
  at: Date,
  action?: string,
): Promise<ScheduleRow[]> {
  const where = { postId, state: "pending", ...(action ? { action } : {}) };
  const rows = await em.find(ScheduleRow, where);
  if (rows.length > 0) await em.nativeUpdate(ScheduleRow, where, { state: "cancelled", doneAt: at });
  return rows.map((row) => ({ ...row, state: "cancelled", doneAt: at }));
}

/** A person's pending schedules on the blog's posts, each with its post. */
export async function pendingSchedulesBy(
  em: EntityManager,
  blogId: string,
  person: string,
): Promise<{ schedule: ScheduleRow; post: PostRow }[]> {
  const schedules = await em.find(ScheduleRow, { scheduledBy: person, state: "pending" });
  if (schedules.length === 0) return [];
  const posts = await em.find(PostRow, { id: { $in: schedules.map((row) => row.postId) }, blogId });
  const byId = new Map(posts.map((post) => [post.id, post]));
  return schedules.flatMap((schedule) => {
    const post = byId.get(schedule.postId);
    return post ? [{ schedule, post }] : [];
  });
}

/** Cancels the schedules named that are still pending. */
export async function cancelSchedulesById(em: EntityManager, ids: string[], at: Date): Promise<void> {
  if (ids.length > 0)
    await em.nativeUpdate(ScheduleRow, { id: { $in: ids }, state: "pending" }, { state: "cancelled", doneAt: at });
}

/** The ids of due pending schedules, oldest first. */
export async function dueScheduleIds(em: EntityManager, now: Date, limit: number): Promise<string[]> {
  const rows = await em.find(
    ScheduleRow,
    { state: "pending", at: { $lte: now } },
    { orderBy: { at: "asc", id: "asc" }, limit, fields: ["id"] },
  );
  return rows.map((row) => row.id);
}

/** A schedule still pending, locked for the transaction (skipped when another holds it); null otherwise. */
export async function lockPendingSchedule(em: EntityManager, id: string): Promise<ScheduleRow | null> {
  const rows: { id: string }[] = await sql(
    em,
    `select id from {schedules} where id = ? and state = 'pending' for update skip locked`,
    [id],
  );
  return rows.length === 0 ? null : em.findOne(ScheduleRow, { id }, { refresh: true });
}

export async function finishSchedule(
  em: EntityManager,
  id: string,
  state: "applied" | "failed",
  failure: string,
  at: Date,
): Promise<void> {
  await em.nativeUpdate(ScheduleRow, { id }, { state, failure, doneAt: at });
}
