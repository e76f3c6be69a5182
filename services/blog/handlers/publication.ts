import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { PublicationResultSchema, ScheduleResultSchema, type PostService } from "../../../gen/pf/blog/v1/posts_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { approverOf } from "../../kit/auth/authorship.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { BlogContext } from "../context.js";
import { cancelSchedules, insertSchedule, revisionOf, scheduleByKey } from "../db/posts.js";
import type { ScheduleRow } from "../db/entities.js";
import { publishNow, unpublishNow } from "../publishing.js";
import { recordReview } from "../revisions.js";
import { loadPostForWrite, requirePostEditor } from "../ownership.js";
import { postView, scheduleToProto } from "../views.js";

type PublicationHandlers = Pick<
  ServiceImpl<typeof PostService>,
  "publishPost" | "unpublishPost" | "schedulePost" | "cancelSchedule"
>;

/** Publish, unpublish and schedules: authors their own posts, editors and owners every post (designed). */
export function publicationHandlers(ctx: BlogContext): PublicationHandlers {
  return {
    async publishPost(request, call) {
      const person = actingPerson(call);
      // A review sent along is a person's approval, recorded first in the same transaction.
      const reviewer = request.review ? approverOf(call) : undefined;
      return ctx.transaction(async (em) => {
        const { post, blog } = await loadPostForWrite(em, request.id);
        requirePostEditor(call, post, person);
        const at = ctx.clock.now();
        const n = request.revision || post.currentRevision;
        if (request.review && reviewer) await recordReview(em, post, { ...request.review, revision: n }, reviewer, at);
        const changed = await publishNow(em, post, n, person, at);
        return create(PublicationResultSchema, {
          post: await postView(em, post, blog.handle, { member: true }),
          unchanged: !changed,
        });
      });
    },

    async unpublishPost(request, call) {
      const person = actingPerson(call);
      return ctx.transaction(async (em) => {
        const { post, blog } = await loadPostForWrite(em, request.id);
        requirePostEditor(call, post, person);
        const changed = await unpublishNow(em, post, person, ctx.clock.now());
        return create(PublicationResultSchema, {
          post: await postView(em, post, blog.handle, { member: true }),
          unchanged: !changed,
        });
      });
    },

    async schedulePost(request, call) {
      const person = actingPerson(call);
      // Declared: action publish or unpublish when given, `at` set, revision not negative. A cancel may leave out
      // the action it shares the request with; a schedule may not.
      if (request.action === "") throw invalid("action", "action is publish or unpublish.");
      const when = timestampDate(request.at!);
      return ctx.transaction(async (em) => {
        const { post } = await loadPostForWrite(em, request.id);
        requirePostEditor(call, post, person);
        const at = ctx.clock.now();
        const n = request.revision || post.currentRevision;
        const key = { postId: post.id, action: request.action, at: when, revision: n };
        const same = await scheduleByKey(em, key);
        // Idempotent per (post, action, time, revision): the same request answers the same schedule.
        if (same) {
          answerStatus(call, 200);
          return create(ScheduleResultSchema, { schedule: scheduleToProto(same) });
        }
        if (when.getTime() <= at.getTime())
          throw problem(422, "schedule.not_future", "A schedule is for a future time.", { now: at.toISOString() });
        if (!(await revisionOf(em, post.id, n)))
          throw problem(404, "revision.not_found", `The post has no revision ${n}.`);
        // One pending schedule per action: a different one replaces it.
        const cancelled = await cancelSchedules(em, post.id, at, request.action);
        const row: ScheduleRow = {
          id: newId("sch", at.getTime()),
          ...key,
          scheduledBy: person,
          state: "pending",
          failure: "",
          createdAt: at,
          doneAt: null,
        };
        await insertSchedule(em, row);
        return create(ScheduleResultSchema, {
          schedule: scheduleToProto(row),
          cancelled: cancelled.map(scheduleToProto),
        });
      });
    },

    async cancelSchedule(request, call) {
      const person = actingPerson(call);
      return ctx.transaction(async (em) => {
        const { post } = await loadPostForWrite(em, request.id);
        requirePostEditor(call, post, person);
        const cancelled = await cancelSchedules(em, post.id, ctx.clock.now(), request.action || undefined);
        return create(ScheduleResultSchema, { cancelled: cancelled.map(scheduleToProto) });
      });
    },
  };
}
