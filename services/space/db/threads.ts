import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type Post, type Thread, ThreadSchema } from "../../../gen/pf/space/v1/forum_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";
import { authorshipOf, type AuthorKind } from "./posts.js";
import type { Order, Position } from "../domain/ordering.js";

/** A thread as stored, with the reader's own vote (0 when none or anonymous). */
export interface StoredThread {
  id: string;
  space: string;
  slug: string;
  title: string;
  authorKind: AuthorKind;
  author: string;
  pinned: boolean;
  locked: boolean;
  deletedAt: Date | null;
  score: number;
  hot: number;
  replyCount: number;
  createdAt: Date;
  lastActivityAt: Date;
  firstPostId: string;
  myVote: number;
}

export const threadNotFound = () => problem(404, "thread.not_found", "There is no such thread in this space.");

const COLUMNS = `t.id, t.space, t.slug, t.title, t.author_kind as "authorKind", t.author, t.pinned, t.locked,
  t.deleted_at as "deletedAt", t.score, t.hot, t.reply_count as "replyCount", t.created_at as "createdAt",
  t.last_activity_at as "lastActivityAt",
  (select p.id from {posts} p where p.thread_id = t.id and p.first) as "firstPostId"`;
const MY_VOTE = (param: string) =>
  `coalesce((select v.value from {votes} v where v.thread_id = t.id and v.person = ${param}), 0)::int as "myVote"`;

/** Keys of each ordering, pinned first; the cursor comparison walks them in the same order. */
const ORDERINGS: Record<Order, { keys: string; after: string }> = {
  new: {
    keys: "t.pinned desc, t.created_at desc, t.id desc",
    after: "(t.pinned::int, t.created_at, t.id) < ($3::int, $4::timestamptz, $5::text)",
  },
  hot: {
    keys: "t.pinned desc, t.hot desc, t.id desc",
    after: "(t.pinned::int, t.hot, t.id) < ($3::int, $4::float8, $5::text)",
  },
  top: {
    keys: "t.pinned desc, t.score desc, t.created_at desc, t.id desc",
    after: "(t.pinned::int, t.score, t.created_at, t.id) < ($3::int, $4::int, $5::timestamptz, $6::text)",
  },
};

const pages = Object.fromEntries(
  (Object.keys(ORDERINGS) as Order[]).map((order) => {
    const { keys, after } = ORDERINGS[order];
    const limit = order === "top" ? "$7" : "$6";
    return [
      order,
      {
        first: new HotRead<StoredThread, unknown[]>(
          `threads.first.${order}`,
          `select ${COLUMNS}, ${MY_VOTE("$2")} from {threads} t where t.space = $1 and t.deleted_at is null
            order by ${keys} limit $3`,
        ),
        next: new HotRead<StoredThread, unknown[]>(
          `threads.next.${order}`,
          `select ${COLUMNS}, ${MY_VOTE("$2")} from {threads} t where t.space = $1 and t.deleted_at is null and ${after}
            order by ${keys} limit ${limit}`,
        ),
      },
    ];
  }),
) as Record<Order, { first: HotRead<StoredThread, unknown[]>; next: HotRead<StoredThread, unknown[]> }>;

/** A page of a space's threads in an ordering, after a position (limit + 1 rows, for `page`). */
export function readThreads(
  ctx: ReadContext,
  query: { space: string; order: Order; after?: Position; limit: number; reader: string },
): Promise<StoredThread[]> {
  const { first, next } = pages[query.order];
  if (!query.after) return first.run(ctx, query.space, query.reader, query.limit + 1);
  return next.run(ctx, query.space, query.reader, ...query.after, query.limit + 1);
}

/** The sort key of a thread in an ordering (the next page's cursor). */
export function positionOf(order: Order, thread: StoredThread): Position {
  const pinned = thread.pinned ? 1 : 0;
  const created = new Date(thread.createdAt).toISOString();
  if (order === "new") return [pinned, created, thread.id];
  if (order === "hot") return [pinned, thread.hot, thread.id];
  return [pinned, thread.score, created, thread.id];
}

const threadBySlug = new HotRead<StoredThread, [string, string, string]>(
  "threads.by_slug",
  `select ${COLUMNS}, ${MY_VOTE("$3")} from {threads} t where t.space = $1 and t.slug = $2`,
);

/** One thread of a space by slug (deleted ones too), or undefined. */
export async function readThread(
  ctx: ReadContext,
  space: string,
  slug: string,
  reader: string,
): Promise<StoredThread | undefined> {
  const [row] = await threadBySlug.run(ctx, space, slug, reader);
  return row;
}

const threadById = new HotRead<StoredThread, [string]>(
  "threads.by_id",
  `select ${COLUMNS}, 0 as "myVote" from {threads} t where t.id = $1`,
);

/** One thread by id (deleted ones too), or undefined. */
export async function readThreadById(ctx: ReadContext, id: string): Promise<StoredThread | undefined> {
  const [row] = await threadById.run(ctx, id);
  return row;
}

const newestInSpaces = new HotRead<StoredThread & { body: string; bodyRevision: number }, [string[], number]>(
  "threads.newest",
  `select ${COLUMNS}, 0 as "myVote", f.body, f.revision as "bodyRevision"
    from {threads} t left join {posts} f on f.thread_id = t.id and f.first
    where t.space = any($1) and t.deleted_at is null order by t.created_at desc, t.id desc limit $2`,
);

/** The newest threads of the given spaces with their first post's body and its revision (the feeds). */
export function readNewestThreads(ctx: ReadContext, spaces: string[], limit: number) {
  return newestInSpaces.run(ctx, spaces, limit);
}

/** A thread locked for a write (by id, or by its space and slug), or undefined. */
export async function lockThread(
  em: EntityManager,
  by: { id: string } | { space: string; slug: string },
): Promise<StoredThread | undefined> {
  const where = "id" in by ? "t.id = ?" : "t.space = ? and t.slug = ?";
  const params = "id" in by ? [by.id] : [by.space, by.slug];
  const [row]: StoredThread[] = await sql(
    em,
    `select ${COLUMNS}, 0 as "myVote" from {threads} t where ${where} for update of t`,
    params,
  );
  return row;
}

/** A new thread's row. */
export async function insertThread(
  em: EntityManager,
  thread: Omit<StoredThread, "firstPostId" | "myVote" | "deletedAt" | "lastActivityAt">,
): Promise<void> {
  await sql(
    em,
    `insert into {threads} (id, space, slug, title, author_kind, author, pinned, locked, deleted_at,
       score, hot, reply_count, created_at, last_activity_at) values (?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, ?)`,
    [
      thread.id,
      thread.space,
      thread.slug,
      thread.title,
      thread.authorKind,
      thread.author,
      thread.pinned,
      thread.locked,
      thread.score,
      thread.hot,
      thread.replyCount,
      thread.createdAt,
      thread.createdAt,
    ],
  );
}

/** Changes a locked thread's flags, score or counts (only what `change` names). */
export async function updateThread(
  em: EntityManager,
  id: string,
  change: Partial<
    Pick<StoredThread, "pinned" | "locked" | "deletedAt" | "score" | "hot" | "replyCount" | "lastActivityAt">
  >,
): Promise<void> {
  const columns: Record<string, string> = {
    pinned: "pinned",
    locked: "locked",
    deletedAt: "deleted_at",
    score: "score",
    hot: "hot",
    replyCount: "reply_count",
    lastActivityAt: "last_activity_at",
  };
  const names = Object.keys(change) as (keyof typeof change)[];
  if (names.length === 0) return;
  await sql(em, `update {threads} set ${names.map((name) => `${columns[name]} = ?`).join(", ")} where id = ?`, [
    ...names.map((name) => change[name]),
    id,
  ]);
}

/** A thread as the contract answers it; `firstPost` only where the route shows it. */
export function threadToProto(thread: StoredThread, firstPost?: Post): Thread {
  return create(ThreadSchema, {
    id: thread.id,
    space: thread.space,
    slug: thread.slug,
    title: thread.deletedAt ? "" : thread.title,
    author: authorshipOf(thread.authorKind, thread.author),
    ai: thread.authorKind === "ai",
    pinned: thread.pinned,
    locked: thread.locked,
    score: thread.score,
    replyCount: thread.replyCount,
    createdAt: timestampFromDate(new Date(thread.createdAt)),
    lastActivityAt: timestampFromDate(new Date(thread.lastActivityAt)),
    firstPost,
    myVote: thread.myVote,
    firstPostId: thread.firstPostId,
    deleted: thread.deletedAt !== null,
  });
}
