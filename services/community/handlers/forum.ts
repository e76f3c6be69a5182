import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { ModerationRequest } from "../../../gen/pf/community/v1/common_pb.js";
import {
  type ForumService,
  type PostWriteRequest,
  PostWriteResultSchema,
} from "../../../gen/pf/community/v1/forum_pb.js";
import { SpaceInternalService } from "../../../gen/pf/space/v1/internal_pb.js";
import { callerOf, principalOf } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimitedCall } from "../../kit/writes/rate-limit.js";
import { answerStatus } from "../../kit/handler/status.js";
import { relayFailure } from "../../kit/rpc/relay-failure.js";
import { applyForumModeration } from "../consumers/forum-moderation.js";
import type { CommunityContext } from "../context.js";
import type { Rate } from "../settings.js";
import { moderationByKey, moderationToProto, recordModeration } from "../db/moderation.js";
import { type ForumAction, requireSpaceId } from "../domain/forum.js";
import { requireReason, requireTitle, TEXT } from "../domain/text.js";
import { moderatorOf } from "../moderators.js";

type ForumHandlers = Pick<
  ServiceImpl<typeof ForumService>,
  "editPost" | "deletePost" | "createThread" | "replyToThread" | "voteOnThread" | "pinThread" | "lockThread"
>;

/**
 * Forum writes through community: space owns the forum and checks visibility,
 * locks and limits; community forwards each write to space's internal RPC as
 * the acting subject (X-PF-Subject, or X-PF-Origin: ai), and records every
 * moderator's action in its log, applied by space (consumers/forum-moderation.ts).
 */
export function forumHandlers(ctx: CommunityContext): ForumHandlers {
  const space = () => ctx.client(SpaceInternalService);

  /**
   * The writer forwarded, with its key for space and limits: the person
   * (X-PF-Subject), or AI output (X-PF-Origin: ai, and `aiService`, the service
   * that sent it, which space credits and compares). AI output naming a person
   * stays AI output: the person is forwarded only so space bounds the write by
   * what they may reach; it is never the author.
   */
  const writer = (call: HandlerContext) => {
    const { person, principal } = callerOf(call);
    const ai = principal.origin === "ai";
    const headers: Record<string, string> = {};
    if (person !== undefined) headers["x-pf-subject"] = person;
    if (ai) headers["x-pf-origin"] = "ai";
    const aiService = ai ? principal.sub : "";
    return { who: ai || person === undefined ? principal.sub : person, headers, aiService };
  };

  /** Space's idempotency key: the caller's own key kept apart per writer, or a fresh one. */
  const keyFor = (who: string, key: string) => (key === "" ? newId("req") : `${who}:${key}`);

  const forward = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      return relayFailure("space", error);
    }
  };

  /**
   * A write forwarded to space, counted against the writer's limit only if space takes it: a write space refuses
   * or does not answer gives its hit back, so a writer retrying through an outage is never refused for it.
   */
  const forwardLimited = <T>(rule: string, rate: Rate, who: string, work: () => Promise<T>): Promise<T> =>
    rateLimitedCall(ctx, [{ name: rule, key: who, ...rate }], ctx.clock.now(), () => forward(work));

  /**
   * A moderator's forum action: recorded pending (with the caller's key, so a
   * retry finds the same record), then applied in space at once. Space down:
   * 202 with the record pending, applied later by the effect. Space refusing:
   * its problem, and the record failed. Never shown as applied before space applied it.
   */
  const moderate = async (
    call: HandlerContext,
    request: { reason: string; idempotencyKey: string },
    action: ForumAction,
    target: { kind: "post" | "thread"; id: string },
    value: string,
    body = "",
  ) => {
    const moderator = moderatorOf(call);
    const reason = requireReason(request.reason);
    const requestKey = request.idempotencyKey === "" ? undefined : `${principalOf(call).sub}:${request.idempotencyKey}`;
    const recorded = await ctx.transaction(async (em) => {
      const found = requestKey ? await moderationByKey(em, requestKey) : null;
      if (found) {
        if (found.action !== action || found.targetId !== target.id || found.value !== value || found.body !== body)
          throw problem(409, "idempotency.conflict", "This idempotency key was used for another moderation action.");
        return found;
      }
      const at = ctx.clock.now();
      return recordModeration(em, {
        action,
        target: { service: "space", ...target },
        ...moderator,
        reason,
        value,
        body,
        status: "pending",
        requestKey,
        at,
      });
    });
    const outcome = await applyForumModeration(ctx, recorded.id);
    if ("refused" in outcome) throw outcome.refused;
    if (outcome.row.status === "failed")
      throw problem(409, "moderation.failed", `Space refused this action (${outcome.row.failure}).`, {
        record: outcome.row.id,
      });
    if ("pending" in outcome) answerStatus(call, 202);
    const result = "result" in outcome ? outcome.result : undefined;
    return create(PostWriteResultSchema, {
      thread: result?.thread,
      post: result?.post,
      moderation: moderationToProto(outcome.row),
    });
  };

  const refuseReason = (request: PostWriteRequest) => {
    if (request.reason !== "") throw invalid("reason", "Only moderators give a reason.");
  };

  return {
    async editPost(request, call) {
      const id = requireSpaceId("post", request.id);
      // Bodies are held to their rules by the contract (1 to 20000 characters, not blank), as is a new thread's space.
      const body = request.body;
      if (callerOf(call).admittedBy === "moderate")
        return moderate(call, request, "edit_post", { kind: "post", id }, "", body);
      refuseReason(request);
      const { who, headers, aiService } = writer(call);
      const answer = await forward(() =>
        space().editPost(
          { postId: id, body, idempotencyKey: keyFor(who, request.idempotencyKey), aiService },
          { headers },
        ),
      );
      return create(PostWriteResultSchema, { thread: answer.thread, post: answer.post });
    },

    async deletePost(request, call) {
      const id = requireSpaceId("post", request.id);
      if (callerOf(call).admittedBy === "moderate")
        return moderate(call, request, "delete_post", { kind: "post", id }, "");
      refuseReason(request);
      const { who, headers, aiService } = writer(call);
      const answer = await forward(() =>
        space().deletePost({ postId: id, idempotencyKey: keyFor(who, request.idempotencyKey), aiService }, { headers }),
      );
      return create(PostWriteResultSchema, { thread: answer.thread, post: answer.post });
    },

    async createThread(request, call) {
      const title = requireTitle("title", request.title, TEXT.title);
      const body = request.body;
      const { who, headers, aiService } = writer(call);
      const answer = await forwardLimited("community.post.person", ctx.settings.postPerPerson, who, () =>
        space().createThread(
          { space: request.space, title, body, idempotencyKey: keyFor(who, request.idempotencyKey), aiService },
          { headers },
        ),
      );
      return create(PostWriteResultSchema, { thread: answer.thread, post: answer.post });
    },

    async replyToThread(request, call) {
      const threadId = requireSpaceId("thread", request.id);
      const body = request.body;
      const { who, headers, aiService } = writer(call);
      const answer = await forwardLimited("community.post.person", ctx.settings.postPerPerson, who, () =>
        space().replyToThread(
          { threadId, body, idempotencyKey: keyFor(who, request.idempotencyKey), aiService },
          { headers },
        ),
      );
      return create(PostWriteResultSchema, { thread: answer.thread, post: answer.post });
    },

    async voteOnThread(request, call) {
      const threadId = requireSpaceId("thread", request.id);
      // 1, -1 or 0 (the contract's rule).
      const value = request.value as -1 | 0 | 1;
      const { who, headers } = writer(call);
      const answer = await forwardLimited("community.vote.person", ctx.settings.votePerPerson, who, () =>
        space().voteOnThread({ threadId, value, idempotencyKey: keyFor(who, request.idempotencyKey) }, { headers }),
      );
      return create(PostWriteResultSchema, { thread: answer.thread, post: answer.post });
    },

    pinThread: (request: ModerationRequest, call) =>
      moderate(
        call,
        request,
        "pin",
        { kind: "thread", id: requireSpaceId("thread", request.id) },
        String(request.value),
      ),

    lockThread: (request: ModerationRequest, call) =>
      moderate(
        call,
        request,
        "lock",
        { kind: "thread", id: requireSpaceId("thread", request.id) },
        String(request.value),
      ),
  };
}
