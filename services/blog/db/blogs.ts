import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { BlogRow, MemberRow } from "./entities.js";
import type { Role } from "../domain/blogs.js";

/** The blog of a handle; `lock` takes its row for the transaction (member changes run one after the other). */
export function blogByHandle(em: EntityManager, handle: string, lock = false): Promise<BlogRow | null> {
  return em.findOne(BlogRow, { handle }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

export function blogById(em: EntityManager, id: string): Promise<BlogRow | null> {
  return em.findOne(BlogRow, { id });
}

export function blogFor(em: EntityManager, subject: string): Promise<BlogRow | null> {
  return em.findOne(BlogRow, { createdFor: subject });
}

/**
 * Inserts a blog unless its subject or handle already has one (concurrent creates: one row); answers whether
 * it was inserted. Its creator becomes its owner in the same statement's transaction.
 */
export async function insertBlog(em: EntityManager, row: BlogRow): Promise<boolean> {
  const inserted: unknown[] = await sql(
    em,
    `insert into {blogs} (id, handle, created_for, title, description, language, theme, feed_rss,
       feed_atom, feed_json, feed_items, feed_full_text, revision, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing returning id`,
    [
      row.id,
      row.handle,
      row.createdFor,
      row.title,
      row.description,
      row.language,
      row.theme,
      row.feedRss,
      row.feedAtom,
      row.feedJson,
      row.feedItems,
      row.feedFullText,
      row.revision,
      row.createdAt,
      row.updatedAt,
    ],
  );
  if (inserted.length === 0) return false;
  await em.insert(MemberRow, { blogId: row.id, subject: row.createdFor, role: "owner", addedAt: row.createdAt });
  return true;
}

/** Writes the changes and applies them to `row`. */
export async function updateBlog(em: EntityManager, row: BlogRow, changes: Partial<BlogRow>): Promise<void> {
  await em.nativeUpdate(BlogRow, { id: row.id }, changes);
  Object.assign(row, changes);
}

export async function roleOf(
  em: EntityManager,
  blogId: string,
  subject: string | undefined,
): Promise<Role | undefined> {
  if (subject === undefined) return undefined;
  const row = await em.findOne(MemberRow, { blogId, subject });
  return row?.role as Role | undefined;
}

/** Members, owners first, then editors, then authors, each by when they joined. */
export async function membersOf(em: EntityManager, blogId: string): Promise<MemberRow[]> {
  const rows = await em.find(MemberRow, { blogId }, { orderBy: { addedAt: "asc", subject: "asc" }, refresh: true });
  const order: Record<string, number> = { owner: 0, editor: 1, author: 2 };
  return rows.sort((a, b) => order[a.role]! - order[b.role]!);
}

export async function upsertMember(em: EntityManager, row: MemberRow): Promise<void> {
  await sql(
    em,
    `insert into {members} (blog_id, subject, role, added_at) values (?, ?, ?, ?)
     on conflict (blog_id, subject) do update set role = excluded.role`,
    [row.blogId, row.subject, row.role, row.addedAt],
  );
}

export async function deleteMember(em: EntityManager, blogId: string, subject: string): Promise<void> {
  await em.nativeDelete(MemberRow, { blogId, subject });
}

export async function ownerCount(em: EntityManager, blogId: string): Promise<number> {
  return em.count(MemberRow, { blogId, role: "owner" });
}
