import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type Post, PostSchema } from "../../../gen/pf/space/v1/forum_pb.js";
import { type Authorship, AuthorshipSchema } from "../../../gen/pf/v1/authorship_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";

/** A person wrote it, or it is AI output ("no author, labelled as AI"). */
export type AuthorKind = "person" | "ai";

/** A post as stored. `author` is the person, or for AI output the service that sent it. */
export interface StoredPost {
  id: string;
  threadId: string;
  first: boolean;
  authorKind: AuthorKind;
  author: string;
  body: string;
  revision: number;
  createdAt: Date;
  editedAt: Date | null;
  deletedAt: Date | null;
}

export const postNotFound = () => problem(404, "post.not_found", "There is no such post.");

const COLUMNS = `id, thread_id as "threadId", first, author_kind as "authorKind", author, body, revision,
  created_at as "createdAt", edited_at as "editedAt", deleted_at as "deletedAt"`;

const firstPost = new HotRead<StoredPost, [string]>(
  "posts.first",
  `select ${COLUMNS} from {posts} where thread_id = $1 and first`,
);
const repliesFirst = new HotRead<StoredPost, [string, number]>(
  "posts.replies.first",
  `select ${COLUMNS} from {posts} where thread_id = $1 and not first order by created_at, id limit $2`,
);
const repliesNext = new HotRead<StoredPost, [string, string, string, number]>(
  "posts.replies.next",
  `select ${COLUMNS} from {posts} where thread_id = $1 and not first and (created_at, id) > ($2::timestamptz, $3::text)
    order by created_at, id limit $4`,
);

const postById = new HotRead<StoredPost, [string]>("posts.by_id", `select ${COLUMNS} from {posts} where id = $1`);

/** One post by id, or undefined. */
export async function readPost(ctx: ReadContext, id: string): Promise<StoredPost | undefined> {
  const [row] = await postById.run(ctx, id);
  return row;
}

/** A thread's first post. */
export async function readFirstPost(ctx: ReadContext, threadId: string): Promise<StoredPost | undefined> {
  const [row] = await firstPost.run(ctx, threadId);
  return row;
}

/** A page of a thread's replies, oldest first, after [created ISO, id] (limit + 1 rows). */
export function readReplies(ctx: ReadContext, threadId: string, after: string[] | undefined, limit: number) {
  return after
    ? repliesNext.run(ctx, threadId, after[0], after[1], limit + 1)
    : repliesFirst.run(ctx, threadId, limit + 1);
}

/** A post locked for a write, or undefined. */
export async function lockPost(em: EntityManager, id: string): Promise<StoredPost | undefined> {
  const [row]: StoredPost[] = await sql(em, `select ${COLUMNS} from {posts} where id = ? for update`, [id]);
  return row;
}

/** A new post's row. */
export async function insertPost(em: EntityManager, post: StoredPost): Promise<void> {
  await sql(
    em,
    `insert into {posts} (id, thread_id, first, author_kind, author, body, revision, created_at,
       edited_at, deleted_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      post.id,
      post.threadId,
      post.first,
      post.authorKind,
      post.author,
      post.body,
      post.revision,
      post.createdAt,
      post.editedAt,
      post.deletedAt,
    ],
  );
}

/** A new body (edit) or a tombstone (delete, the body dropped) of a locked post; answers it as it now stands. */
export async function changePost(
  em: EntityManager,
  post: StoredPost,
  change: { body: string; at: Date } | { deleted: Date },
): Promise<StoredPost> {
  const next: StoredPost =
    "deleted" in change
      ? { ...post, body: "", deletedAt: change.deleted, revision: post.revision + 1 }
      : { ...post, body: change.body, editedAt: change.at, revision: post.revision + 1 };
  await sql(em, `update {posts} set body = ?, edited_at = ?, deleted_at = ?, revision = ? where id = ?`, [
    next.body,
    next.editedAt,
    next.deletedAt,
    next.revision,
    post.id,
  ]);
  return next;
}

/** Who wrote it, as the shared message: a person, or AI output (never attributed to a person). */
export function authorshipOf(kind: AuthorKind, author: string): Authorship {
  return kind === "person"
    ? create(AuthorshipSchema, { author: { case: "person", value: author } })
    : create(AuthorshipSchema, { author: { case: "ai", value: { service: author } } });
}

/** A post as the contract answers it: its Markdown (the kit renders body_html once the answer is made). */
export function postToProto(post: StoredPost): Post {
  const deleted = post.deletedAt !== null;
  return create(PostSchema, {
    id: post.id,
    threadId: post.threadId,
    author: authorshipOf(post.authorKind, post.author),
    ai: post.authorKind === "ai",
    body: deleted ? "" : post.body,
    createdAt: timestampFromDate(new Date(post.createdAt)),
    editedAt: post.editedAt ? timestampFromDate(new Date(post.editedAt)) : undefined,
    deleted,
    revision: post.revision,
  });
}
