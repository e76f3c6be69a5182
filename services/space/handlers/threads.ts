import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type PostWriteRequest, ThreadOrder, ThreadReadResultSchema } from "../../../gen/pf/space/v1/forum_pb.js";
import type { SpaceService } from "../../../gen/pf/space/v1/space_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeCursor, decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { plainTitle } from "../../kit/rich-text/plain-title.js";
import { claimSlug } from "../../kit/slugs/slugs.js";
import type { SpaceContext } from "../context.js";
import { recordModeration } from "../db/audit.js";
import {
  changePost,
  insertPost,
  lockPost,
  postToProto,
  readFirstPost,
  readReplies,
  type StoredPost,
} from "../db/posts.js";
import { readSpace, spaceToProto, type StoredSpace } from "../db/spaces.js";
import {
  insertThread,
  lockThread,
  positionOf,
  readThread,
  readThreads,
  threadNotFound,
  threadToProto,
  updateThread,
  type StoredThread,
} from "../db/threads.js";
import { hotness } from "../../kit/handler/hotness.js";
import { checkPosition, type Order } from "../domain/ordering.js";
import { postChanged, threadChanged } from "../events.js";
import { enter, readerOf } from "../readers.js";
import { threadTarget, type ThreadTarget } from "../targets.js";
import { actorOf, authorOf, limitWriter, requireAuthor, writerOf, written, type Writer } from "../writers.js";
import { type Outcome, writeResult } from "../results.js";

type ThreadHandlers = Pick<
  ServiceImpl<typeof SpaceService>,
  "listThreads" | "getThread" | "createThread" | "deleteThread"
>;

const ORDERS: Record<ThreadOrder, Order> = {
  [ThreadOrder.UNSPECIFIED]: "hot",
  [ThreadOrder.HOT]: "hot",
  [ThreadOrder.NEW]: "new",
  [ThreadOrder.TOP]: "top",
};

/**
 * A thread's title (plain text, tags removed, as community's: 400 naming it when nothing is left) and first post;
 * the contract holds both to their lengths (title 1 to 200 characters, body 1 to 20000 and not blank).
 */
export function threadText(request: { title: string; body: string }) {
  return { title: plainTitle("title", request.title, 200), body: request.body };
}

/** Creates a thread in a space the writer may open: its slug, its first post, the events. */
export async function createThreadIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Writer,
  space: StoredSpace,
  text: { title: string; body: string },
): Promise<Outcome> {
  await limitWriter(ctx, em, writer, "post");
  const at = ctx.clock.now();
  const id = newId("thr", at.getTime());
  const slug = await claimSlug(em, `threads:${space.key}`, id, text.title, { at });
  const author = authorOf(writer);
  const thread: StoredThread = {
    id,
    space: space.key,
    slug,
    title: text.title,
    ...author,
    pinned: false,
    locked: false,
    deletedAt: null,
    score: 0,
    hot: hotness(0, at),
    replyCount: 0,
    createdAt: at,
    lastActivityAt: at,
    firstPostId: newId("pst", at.getTime()),
    myVote: 0,
  };
  const post: StoredPost = {
    id: thread.firstPostId,
    threadId: id,
    first: true,
    ...author,
    body: text.body,
    revision: 1,
    createdAt: at,
    editedAt: null,
    deletedAt: null,
  };
  await insertThread(em, thread);
  await insertPost(em, post);
  await threadChanged(em, "created", { space, thread, actor: actorOf(writer), at });
  await postChanged(em, "created", { space: space.key, post, actor: actorOf(writer), at });
  return { thread, post };
}

/**
 * Deletes a thread: a tombstone (no title, no first post body) that keeps its
 * replies. Its author, or a moderator; deleting a deleted thread answers it
 * again. `moderation` is the audit's note when a moderator acts.
 */
export async function deleteThreadIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Writer,
  target: ThreadTarget,
  moderation?: { reason: string; relayedBy: string },
): Promise<Outcome> {
  const thread = await lockThread(em, { id: target.thread.id });
  if (!thread) throw threadNotFound();
  requireAuthor(writer, thread);
  const first = await lockPost(em, thread.firstPostId);
  if (thread.deletedAt) return { thread, post: first };
  const at = ctx.clock.now();
  await updateThread(em, thread.id, { deletedAt: at });
  const gone = { ...thread, deletedAt: at };
  const deletedPost = first && (await changePost(em, first, { deleted: at }));
  const actor = actorOf(writer);
  await threadChanged(em, "deleted", { space: target.space, thread: gone, actor, at });
  if (deletedPost) await postChanged(em, "deleted", { space: target.space.key, post: deletedPost, actor, at });
  const audit =
    writer.kind === "moderator" && moderation
      ? await recordModeration(em, {
          action: "delete_post",
          threadId: thread.id,
          postId: thread.firstPostId,
          actor,
          ...moderation,
          at,
        })
      : undefined;
  return { thread: gone, post: deletedPost, audit };
}

/** Pins or locks a thread (moderators only), audited; an event when the flag changed. */
export async function moderateThreadIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Extract<Writer, { kind: "moderator" }>,
  target: ThreadTarget,
  change: { pinned: boolean } | { locked: boolean },
  note: { reason: string; relayedBy: string },
): Promise<Outcome> {
  const thread = await lockThread(em, { id: target.thread.id });
  if (!thread) throw threadNotFound();
  if (thread.deletedAt) throw problem(409, "thread.deleted", "This thread was deleted.");
  const at = ctx.clock.now();
  const [flag, on] = "pinned" in change ? (["pinned", change.pinned] as const) : (["locked", change.locked] as const);
  const action = flag === "pinned" ? (on ? "pin" : "unpin") : on ? "lock" : "unlock";
  const next = { ...thread, [flag]: on };
  if (thread[flag] !== on) {
    await updateThread(em, thread.id, { [flag]: on });
    const event = flag === "pinned" ? (on ? "pinned" : "unpinned") : on ? "locked" : "unlocked";
    await threadChanged(em, event, { space: target.space, thread: next, actor: writer.actor, at });
  }
  const audit = await recordModeration(em, {
    action,
    threadId: thread.id,
    postId: "",
    actor: writer.actor,
    ...note,
    at,
  });
  return { thread: next, audit };
}

export function threadHandlers(ctx: SpaceContext): ThreadHandlers {
  return {
    async listThreads(request, call) {
      const reader = readerOf(ctx, call);
      const space = await enter(ctx, reader, await readSpace(ctx, request.space));
      // One of ThreadOrder's values (the contract's rule).
      const order = ORDERS[request.order];
      const limit = pageLimit(request.limit);
      const position = decodeCursor(request.cursor);
      const after = position && checkPosition(order, position);
      if (position && !after) throw invalid("cursor", "cursor is not one this service issued for this ordering");
      const rows = await readThreads(ctx, { space: space.key, order, after, limit, reader: reader.person });
      const { items, nextCursor } = page(rows, limit, (thread) => positionOf(order, thread));
      return create(ThreadReadResultSchema, {
        space: spaceToProto(space),
        threads: items.map((thread) => threadToProto(thread)),
        nextCursor,
      });
    },

    async getThread(request, call) {
      const reader = readerOf(ctx, call);
      const space = await enter(ctx, reader, await readSpace(ctx, request.space));
      const thread = await readThread(ctx, space.key, request.slug, reader.person);
      if (!thread) throw threadNotFound();
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2);
      if (after && Number.isNaN(Date.parse(after[0]))) throw invalid("cursor", "cursor is not one this service issued");
      const [first, replies] = await Promise.all([
        readFirstPost(ctx, thread.id),
        readReplies(ctx, thread.id, after, limit),
      ]);
      const { items, nextCursor } = page(replies, limit, (post) => [new Date(post.createdAt).toISOString(), post.id]);
      return create(ThreadReadResultSchema, {
        space: spaceToProto(space),
        thread: threadToProto(thread, first && postToProto(first)),
        posts: items.map(postToProto),
        nextPostsCursor: nextCursor,
      });
    },

    async createThread(request, call) {
      const writer = writerOf(call);
      const text = threadText(request);
      return written(
        ctx,
        call,
        request,
        { scope: `space.thread:${actorOf(writer)}` },
        async () => enter(ctx, readerOf(ctx, call), await readSpace(ctx, request.space)),
        async (em, space) => writeResult(await createThreadIn(ctx, em, writer, space, text)),
      );
    },

    async deleteThread(request: PostWriteRequest, call: HandlerContext) {
      const writer = writerOf(call);
      return written(
        ctx,
        call,
        request,
        { scope: `space.thread.delete:${actorOf(writer)}` },
        () => threadTarget(ctx, readerOf(ctx, call), { space: request.space, slug: request.slug }),
        async (em, target) => writeResult(await deleteThreadIn(ctx, em, writer, target)),
      );
    },
  };
}
