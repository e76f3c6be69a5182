import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import {
  type Comment,
  CommentSchema,
  type CommentThread,
  CommentThreadSchema,
} from "../../../gen/pf/community/v1/common_pb.js";
import { type Author, authorColumns, authorFromColumns, authorshipToProto } from "../../kit/auth/authorship.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { sql } from "../../kit/db/sql.js";
import { threadNotFound } from "../domain/threads.js";
import { CommentRow, CommentVoteRow, ThreadRow } from "./entities.js";

/** An EntityRef as the thread columns hold it. */
export interface Ref {
  service: string;
  kind: string;
  id: string;
}

export const commentNotFound = () => problem(404, "comment.not_found", "No such comment.");

/**
 * The thread of a ref, made on first use. Concurrent resolves of one ref
 * meet at the unique constraint: one insert wins, the others do nothing and
 * read the winner's row, so there is exactly one thread per ref.
 */
export async function resolveThread(em: EntityManager, ref: Ref, at: Date, lock = false): Promise<ThreadRow> {
  await sql(
    em,
    `insert into {threads} (id, ref_service, ref_kind, ref_id, visibility, comments, created_at)
       values (?, ?, ?, ?, 'public', 0, ?) on conflict (ref_service, ref_kind, ref_id) do nothing`,
    [newId("cth"), ref.service, ref.kind, ref.id, at],
  );
  return em.findOneOrFail(
    ThreadRow,
    { refService: ref.service, refKind: ref.kind, refId: ref.id },
    { refresh: true, ...(lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) },
  );
}

/** The thread of a ref, if it was ever resolved. */
export function threadOfRef(em: EntityManager, ref: Ref): Promise<ThreadRow | null> {
  return em.findOne(ThreadRow, { refService: ref.service, refKind: ref.kind, refId: ref.id }, { refresh: true });
}

/** A thread by id, locked when asked (comments and visibility changes on one thread in order); 404 when missing. */
export async function threadById(em: EntityManager, id: string, lock = false): Promise<ThreadRow> {
  const row = await em.findOne(ThreadRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row) throw threadNotFound();
  return row;
}

/** Writes changes to a thread (its visibility) in the caller's transaction. */
export async function changeThread(em: EntityManager, row: ThreadRow, changes: Partial<ThreadRow>): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

export function threadToProto(row: ThreadRow): CommentThread {
  return create(CommentThreadSchema, {
    id: row.id,
    ref: { service: row.refService, kind: row.refKind, id: row.refId },
    visibility: row.visibility,
    comments: BigInt(row.comments),
    createdAt: timestampFromDate(row.createdAt),
  });
}

/** Writes a comment in a thread (locked by the caller) and counts it. */
export async function insertComment(
  em: EntityManager,
  thread: ThreadRow,
  author: Author,
  body: string,
  at: Date,
): Promise<CommentRow> {
  const row = em.create(CommentRow, {
    id: newId("cmt"),
    threadId: thread.id,
    ...authorColumns(author),
    body,
    score: 0,
    createdAt: at,
    deletedAt: null,
    deletedBy: null,
  });
  thread.comments += 1;
  await em.flush();
  return row;
}

/** A comment by id, locked when asked (votes on one comment in order); 404 when missing. */
export async function commentById(em: EntityManager, id: string, lock = false): Promise<CommentRow> {
  const row = await em.findOne(CommentRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row) throw commentNotFound();
  return row;
}

/** Deletes a comment (a tombstone: the text goes, the row stays) and uncounts it; a second delete changes nothing. */
export async function tombstone(em: EntityManager, comment: CommentRow, by: string, at: Date): Promise<boolean> {
  if (comment.deletedAt) return false;
  const thread = await threadById(em, comment.threadId, true);
  Object.assign(comment, { deletedAt: at, deletedBy: by, body: "" });
  thread.comments -= 1;
  await em.flush();
  return true;
}

/** A thread's comments, oldest first, after a cursor (created_at, id). */
export function commentsOf(
  em: EntityManager,
  threadId: string,
  after: [string, string] | undefined,
  limit: number,
): Promise<CommentRow[]> {
  return em.find(
    CommentRow,
    {
      threadId,
      ...(after
        ? {
            $or: [{ createdAt: { $gt: new Date(after[0]) } }, { createdAt: new Date(after[0]), id: { $gt: after[1] } }],
          }
        : {}),
    },
    { orderBy: { createdAt: "asc", id: "asc" }, limit },
  );
}

/**
 * Sets a person's vote on a comment (locked by the caller, so one person's
 * concurrent votes apply one after the other): 0 withdraws it. The score
 * moves by the difference, so it always equals the sum of the votes.
 */
export async function setVote(em: EntityManager, comment: CommentRow, voter: string, value: number, at: Date) {
  const present = await em.findOne(CommentVoteRow, { commentId: comment.id, voter });
  const before = present ? Number(present.value) : 0;
  if (present && value === 0) em.remove(present);
  else if (present) present.value = value;
  else if (value !== 0) em.create(CommentVoteRow, { commentId: comment.id, voter, value, createdAt: at });
  comment.score += value - before;
  await em.flush();
}

/** A person's votes on comments, by comment id. */
export async function votesOf(em: EntityManager, commentIds: string[], voter: string | undefined) {
  if (!voter || commentIds.length === 0) return new Map<string, number>();
  const rows = await em.find(CommentVoteRow, { commentId: { $in: commentIds }, voter });
  return new Map(rows.map((row) => [row.commentId, Number(row.value)]));
}

export function commentToProto(row: CommentRow, myVote = 0): Comment {
  return create(CommentSchema, {
    id: row.id,
    threadId: row.threadId,
    authorship: authorshipToProto(authorFromColumns(row)),
    body: row.body,
    score: BigInt(row.score),
    myVote,
    createdAt: timestampFromDate(row.createdAt),
    deletedAt: row.deletedAt ? timestampFromDate(row.deletedAt) : undefined,
  });
}
