import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { SpaceService } from "../../../gen/pf/space/v1/space_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import type { SpaceContext } from "../context.js";
import { recordModeration } from "../db/audit.js";
import { changePost, insertPost, lockPost, postNotFound, type StoredPost } from "../db/posts.js";
import { lockThread, threadNotFound, updateThread, type StoredThread } from "../db/threads.js";
import { postChanged } from "../events.js";
import { readerOf } from "../readers.js";
import { postTarget, threadTarget, type ThreadTarget } from "../targets.js";
import { actorOf, authorOf, limitWriter, requireAuthor, writerOf, written, type Writer } from "../writers.js";
import { type Outcome, writeResult } from "../results.js";
import { deleteThreadIn } from "./threads.js";

type PostHandlers = Pick<ServiceImpl<typeof SpaceService>, "replyToThread" | "editPost" | "deletePost">;

/** A thread open to replies and votes: 409 thread.deleted, 409 thread.locked ("locked threads refuse replies and votes"). */
export function requireOpen(thread: StoredThread): void {
  if (thread.deletedAt) throw problem(409, "thread.deleted", "This thread was deleted.");
  if (thread.locked) throw problem(409, "thread.locked", "This thread is locked: it takes no replies nor votes.");
}

/** Replies to a thread (locked under its row lock, so a lock landing first refuses the reply). */
export async function replyIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Writer,
  target: ThreadTarget,
  body: string,
): Promise<Outcome> {
  const thread = await lockThread(em, { id: target.thread.id });
  if (!thread) throw threadNotFound();
  requireOpen(thread);
  await limitWriter(ctx, em, writer, "post");
  const at = ctx.clock.now();
  const post: StoredPost = {
    id: newId("pst", at.getTime()),
    threadId: thread.id,
    first: false,
    ...authorOf(writer),
    body,
    revision: 1,
    createdAt: at,
    editedAt: null,
    deletedAt: null,
  };
  await insertPost(em, post);
  const replyCount = thread.replyCount + 1;
  await updateThread(em, thread.id, { replyCount, lastActivityAt: at });
  await postChanged(em, "created", { space: target.space.key, post, actor: actorOf(writer), at });
  return { thread: { ...thread, replyCount, lastActivityAt: at }, post };
}

/**
 * Edits a post: its author (a person their own, AI output its service's), or
 * a moderator any, audited with the note. 409 post.deleted for a tombstone;
 * a writer's edit in a locked thread is 409 thread.locked; 412
 * revision.conflict when `expected` (or If-Match) is stale.
 */
export async function editIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Writer,
  target: ThreadTarget & { post: StoredPost },
  change: { body: string; expected?: bigint; ifMatch?: ReturnType<typeof ifMatchOf> },
  note?: { reason: string; relayedBy: string },
): Promise<Outcome> {
  const thread = await lockThread(em, { id: target.thread.id });
  const post = await lockPost(em, target.post.id);
  if (!thread || !post) throw postNotFound();
  requireAuthor(writer, post);
  if (post.deletedAt) throw problem(409, "post.deleted", "This post was deleted.");
  if (writer.kind !== "moderator" && thread.locked)
    throw problem(409, "thread.locked", "This thread is locked: its posts can no longer be edited.");
  checkRevision(BigInt(post.revision), change.expected, change.ifMatch);
  const at = ctx.clock.now();
  const edited = await changePost(em, post, { body: change.body, at });
  const actor = actorOf(writer);
  await postChanged(em, "edited", { space: target.space.key, post: edited, actor, at });
  const audit =
    writer.kind === "moderator"
      ? await recordModeration(em, { action: "edit_post", threadId: thread.id, postId: post.id, actor, ...note!, at })
      : undefined;
  return { thread, post: edited, audit };
}

/** Deletes a post (a tombstone); a thread's first post deletes the thread, keeping its replies. */
export async function deleteIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Writer,
  target: ThreadTarget & { post: StoredPost },
  note?: { reason: string; relayedBy: string },
): Promise<Outcome> {
  if (target.post.first) return deleteThreadIn(ctx, em, writer, target, note);
  const thread = await lockThread(em, { id: target.thread.id });
  const post = await lockPost(em, target.post.id);
  if (!thread || !post) throw postNotFound();
  requireAuthor(writer, post);
  if (post.deletedAt) return { thread, post };
  const at = ctx.clock.now();
  const deleted = await changePost(em, post, { deleted: at });
  const replyCount = thread.replyCount - 1;
  await updateThread(em, thread.id, { replyCount });
  const actor = actorOf(writer);
  await postChanged(em, "deleted", { space: target.space.key, post: deleted, actor, at });
  const audit =
    writer.kind === "moderator"
      ? await recordModeration(em, { action: "delete_post", threadId: thread.id, postId: post.id, actor, ...note!, at })
      : undefined;
  return { thread: { ...thread, replyCount }, post: deleted, audit };
}

export function postHandlers(ctx: SpaceContext): PostHandlers {
  return {
    async replyToThread(request, call) {
      const writer = writerOf(call);
      const body = request.body;
      return written(
        ctx,
        call,
        request,
        { scope: `space.reply:${actorOf(writer)}` },
        () => threadTarget(ctx, readerOf(ctx, call), { space: request.space, slug: request.slug }),
        async (em, target) => writeResult(await replyIn(ctx, em, writer, target, body)),
      );
    },

    async editPost(request, call) {
      const writer = writerOf(call);
      const body = request.body;
      const expected = request.expectedRevision === undefined ? undefined : BigInt(request.expectedRevision);
      return written(
        ctx,
        call,
        request,
        { scope: `space.edit:${actorOf(writer)}` },
        () => postTarget(ctx, readerOf(ctx, call), request.id),
        async (em, target) =>
          writeResult(await editIn(ctx, em, writer, target, { body, expected, ifMatch: ifMatchOf(call) })),
      );
    },

    async deletePost(request, call) {
      const writer = writerOf(call);
      return written(
        ctx,
        call,
        request,
        { scope: `space.delete:${actorOf(writer)}` },
        () => postTarget(ctx, readerOf(ctx, call), request.id),
        async (em, target) => writeResult(await deleteIn(ctx, em, writer, target)),
      );
    },
  };
}
