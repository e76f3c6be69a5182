import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { type CommentService, CommentWriteResultSchema } from "../../../gen/pf/community/v1/comments_pb.js";
import { ModerationResultSchema } from "../../../gen/pf/community/v1/common_pb.js";
import { actingPerson, callerOf, personOf, principalOf } from "../../kit/auth/principal.js";
import { authorOf } from "../../kit/auth/authorship.js";
import { verifiedAuthor } from "../../kit/auth/ai-runs.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { commentThreadSeen, requireContentSeen, threadSeen } from "../contents.js";
import type { CommunityContext } from "../context.js";
import { moderationToProto, recordModeration } from "../db/moderation.js";
import {
  commentById,
  commentsOf,
  changeThread,
  commentToProto,
  resolveThread,
  setVote,
  threadById,
  threadToProto,
  tombstone,
  votesOf,
} from "../db/threads.js";
import { refType, requireOpen, requireReadable, requireRef, type ThreadVisibility } from "../domain/threads.js";
import { requireReason } from "../domain/text.js";
import { writeComment } from "../comment-writes.js";
import { limitWriter } from "../limits.js";
import { moderatorOf, readsAsModerator } from "../moderators.js";

type CommentHandlers = Pick<
  ServiceImpl<typeof CommentService>,
  "deleteComment" | "voteOnComment" | "getThread" | "createComment" | "setThreadVisibility" | "resolveThread"
>;

/** The workflow AI output names when it comments. */
export const AI_COMMENT = { workflow: "community.comment", code: "comment.workflow_required" };

/** Browsers: a person's own token, or an app's (services resolve any ref). */
const isBrowser = (call: HandlerContext) => principalOf(call).kind !== "service";

/**
 * Comment threads, one per EntityRef: resolve, read, comment (people and AI
 * output), vote, delete one's own or (moderators) any, set visibility. Every
 * route but moderation answers as the thread's content does to the caller
 * (contents.ts), asked before its transaction.
 */
export function commentHandlers(ctx: CommunityContext): CommentHandlers {
  const { settings } = ctx;
  return {
    async resolveThread(request, call) {
      const ref = requireRef("ref", request.ref);
      if (isBrowser(call) && !settings.browserThreadTypes.has(refType(ref)))
        throw problem(
          403,
          "community.thread_type_not_allowed",
          `Browsers may not resolve threads of ${refType(ref)}.`,
          {
            type: refType(ref),
          },
        );
      // Before the thread is made: a ref whose content the caller may not see leaves no thread behind.
      await requireContentSeen(ctx, call, ref);
      const thread = await ctx.transaction((em) => resolveThread(em, ref, ctx.clock.now()));
      requireReadable(thread.visibility, readsAsModerator(call));
      return create(CommentWriteResultSchema, { thread: threadToProto(thread) });
    },

    async getThread(request, call) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      const person = personOf(principalOf(call));
      await threadSeen(ctx, call, request.id);
      return ctx.transaction(async (em) => {
        const thread = await threadById(em, request.id);
        requireReadable(thread.visibility, readsAsModerator(call));
        const rows = await commentsOf(em, thread.id, after, limit + 1);
        const { items, nextCursor } = page(rows, limit, (row) => [row.createdAt.toISOString(), row.id]);
        const votes = await votesOf(
          em,
          items.map((row) => row.id),
          person,
        );
        return create(CommentWriteResultSchema, {
          thread: threadToProto(thread),
          comments: items.map((row) => commentToProto(row, votes.get(row.id) ?? 0)),
          nextCursor,
        });
      });
    },

    async createComment(request, call) {
      const author = await verifiedAuthor(ctx.ai, authorOf(call, request, AI_COMMENT), AI_COMMENT);
      // The body is held to its rules by the contract (1 to 10000 characters, not blank).
      const body = request.body;
      const once = idempotencyOf(call, request, {
        scope: `comment:${author.kind === "person" ? author.person : principalOf(call).sub}`,
      });
      await threadSeen(ctx, call, request.id);
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const thread = await threadById(em, request.id, true);
          const comment = await writeComment(ctx, em, thread, author, body, at);
          return create(CommentWriteResultSchema, { thread: threadToProto(thread), comment: commentToProto(comment) });
        }),
      );
    },

    async voteOnComment(request, call) {
      const voter = actingPerson(call);
      // 1, -1 or 0 (the contract's rule).
      const value = request.value as -1 | 0 | 1;
      await commentThreadSeen(ctx, call, request.commentId);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        // The comment's row lock puts one person's concurrent votes in order: one vote each.
        const comment = await commentById(em, request.commentId, true);
        const thread = await threadById(em, comment.threadId);
        requireOpen(thread.visibility);
        if (comment.deletedAt) throw problem(409, "comment.deleted", "The comment was deleted.");
        if (comment.authorKind === "person" && comment.author === voter)
          throw problem(409, "vote.own_comment", "No votes on one's own comment.");
        await limitWriter(em, "community.vote.person", settings.votePerPerson, voter, at);
        await setVote(em, comment, voter, value, at);
        return create(CommentWriteResultSchema, {
          thread: threadToProto(thread),
          comment: commentToProto(comment, value),
        });
      });
    },

    async deleteComment(request, call) {
      const moderating = callerOf(call).admittedBy === "moderate";
      const moderator = moderating ? moderatorOf(call) : undefined;
      const reason = moderating ? requireReason(request.reason) : "";
      const person = moderating ? undefined : actingPerson(call);
      if (!moderating && request.reason !== "") throw invalid("reason", "Only moderators give a reason.");
      // A writer reaches the comment only where they may see the thread's content; moderation reaches any (internal).
      if (person !== undefined) await commentThreadSeen(ctx, call, request.commentId);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const comment = await commentById(em, request.commentId, true);
        const thread = await threadById(em, comment.threadId, true);
        // A writer deletes only their own: another's comment (or one in a hidden thread) is 404 to them.
        if (person !== undefined) {
          requireReadable(thread.visibility, false);
          if (comment.authorKind !== "person" || comment.author !== person)
            throw problem(403, "comment.not_author", "Only the comment's author (or a moderator) may delete it.");
        }
        const changed = await tombstone(em, comment, moderator?.actor ?? person!, at);
        const record =
          moderator && changed
            ? await recordModeration(em, {
                action: "delete_comment",
                target: { service: "community", kind: "comment", id: comment.id },
                ...moderator,
                reason,
                status: "applied",
                at,
              })
            : undefined;
        return create(CommentWriteResultSchema, {
          thread: threadToProto(await threadById(em, thread.id)),
          comment: commentToProto(comment),
          moderation: record ? moderationToProto(record) : undefined,
        });
      });
    },

    async setThreadVisibility(request, call) {
      const moderator = moderatorOf(call);
      // public, hidden or locked (the contract's rule).
      const visibility = request.visibility as ThreadVisibility;
      const reason = requireReason(request.reason);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const thread = await threadById(em, request.id, true);
        const changed = thread.visibility !== visibility;
        await changeThread(em, thread, { visibility });
        const record = changed
          ? await recordModeration(em, {
              action: "visibility",
              target: { service: "community", kind: "thread", id: thread.id },
              ...moderator,
              reason,
              value: visibility,
              status: "applied",
              at,
            })
          : undefined;
        return create(ModerationResultSchema, {
          thread: threadToProto(thread),
          record: record ? moderationToProto(record) : undefined,
        });
      });
    },
  };
}
