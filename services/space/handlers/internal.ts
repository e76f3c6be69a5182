import type { ServiceImpl } from "@connectrpc/connect";
import type { SpaceInternalService } from "../../../gen/pf/space/v1/internal_pb.js";
import type { SpaceContext } from "../context.js";
import { readSpace } from "../db/spaces.js";
import { enter, readerOf } from "../readers.js";
import { postTarget, threadTarget } from "../targets.js";
import { actorOf, forwardedWriterOf, moderationNote, voterOf, writerOf, written, type Writer } from "../writers.js";
import { deleteIn, editIn, replyIn } from "./posts.js";
import { moderationResult, writeResult } from "../results.js";
import { createThreadIn, moderateThreadIn, threadText } from "./threads.js";
import { voteIn } from "./votes.js";

/**
 * Community's forum routes, forwarded (analysis B.0): the same rules as the
 * public routes, threads and posts named by id, every call under a required
 * idempotency key, AI output credited to the service that sent it to
 * community, moderators' actions audited with the relaying service and the
 * reason.
 */
export function internalHandlers(ctx: SpaceContext): ServiceImpl<typeof SpaceInternalService> {
  const scope = (what: string, writer: Writer) => ({
    scope: `space.internal.${what}:${actorOf(writer)}`,
    required: true,
  });

  return {
    async createThread(request, call) {
      const writer = forwardedWriterOf(call, request.aiService);
      const text = threadText(request);
      return written(
        ctx,
        call,
        request,
        scope("thread", writer),
        async () => enter(ctx, readerOf(ctx, call), await readSpace(ctx, request.space)),
        async (em, space) => writeResult(await createThreadIn(ctx, em, writer, space, text)),
      );
    },

    async replyToThread(request, call) {
      const writer = forwardedWriterOf(call, request.aiService);
      const body = request.body;
      return written(
        ctx,
        call,
        request,
        scope("reply", writer),
        () => threadTarget(ctx, readerOf(ctx, call), { id: request.threadId }),
        async (em, target) => writeResult(await replyIn(ctx, em, writer, target, body)),
      );
    },

    async voteOnThread(request, call) {
      const writer = voterOf(call);
      const value = request.value as -1 | 0 | 1;
      return written(
        ctx,
        call,
        request,
        scope("vote", writer),
        () => threadTarget(ctx, readerOf(ctx, call), { id: request.threadId }),
        async (em, target) => writeResult(await voteIn(ctx, em, writer, target, value)),
      );
    },

    async editPost(request, call) {
      const writer = forwardedWriterOf(call, request.aiService);
      const body = request.body;
      const note = moderationNote(writer, request);
      return written(
        ctx,
        call,
        request,
        scope("edit", writer),
        () => postTarget(ctx, readerOf(ctx, call), request.postId),
        async (em, target) => moderationResult(await editIn(ctx, em, writer, target, { body }, note)),
      );
    },

    async deletePost(request, call) {
      const writer = forwardedWriterOf(call, request.aiService);
      const note = moderationNote(writer, request);
      return written(
        ctx,
        call,
        request,
        scope("delete", writer),
        () => postTarget(ctx, readerOf(ctx, call), request.postId),
        async (em, target) => moderationResult(await deleteIn(ctx, em, writer, target, note)),
      );
    },

    async pinThread(request, call) {
      const writer = moderatorOf(call);
      const note = moderationNote(writer, request);
      return written(
        ctx,
        call,
        request,
        scope("pin", writer),
        () => threadTarget(ctx, readerOf(ctx, call), { id: request.threadId }),
        async (em, target) =>
          moderationResult(await moderateThreadIn(ctx, em, writer, target, { pinned: request.pinned }, note)),
      );
    },

    async lockThread(request, call) {
      const writer = moderatorOf(call);
      const note = moderationNote(writer, request);
      return written(
        ctx,
        call,
        request,
        scope("lock", writer),
        () => threadTarget(ctx, readerOf(ctx, call), { id: request.threadId }),
        async (em, target) =>
          moderationResult(await moderateThreadIn(ctx, em, writer, target, { locked: request.locked }, note)),
      );
    },
  };
}

/** Pin and lock declare only the moderator's rule. */
function moderatorOf(call: Parameters<typeof writerOf>[0]): Extract<Writer, { kind: "moderator" }> {
  const writer = writerOf(call);
  if (writer.kind !== "moderator") throw new Error("pin and lock admit moderators only");
  return writer;
}
