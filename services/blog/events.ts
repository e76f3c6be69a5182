import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { BlogEventSchema, PostEventSchema, ScheduleEventSchema } from "../../gen/pf/blog/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import type { BlogRow, PostRow, ScheduleRow } from "./db/entities.js";

export type PostAction = "created" | "revised" | "published" | "unpublished" | "deleted" | "slug_changed";

/** The post events' subjects: one token after `blog.post.`. */
export const postSubject = (action: PostAction) => `blog.post.${action}`;
export const SCHEDULE_FAILED = "blog.schedule.failed";
export const SCHEDULE_APPLIED = "blog.schedule.applied";

/** blog.post.<action>, in the transaction of the change. */
export function postChanged(em: EntityManager, post: PostRow, action: PostAction, actor: string, at: Date) {
  return recordEvent(em, postSubject(action), PostEventSchema, {
    action,
    postId: post.id,
    blogId: post.blogId,
    revision: post.currentRevision,
    publishedRevision: post.publishedRevision ?? 0,
    slug: post.slug,
    version: BigInt(post.version),
    actor,
    at: timestampFromDate(at),
  });
}

export function blogCreated(em: EntityManager, blog: BlogRow) {
  return recordEvent(em, "blog.blog.created", BlogEventSchema, {
    blogId: blog.id,
    handle: blog.handle,
    createdFor: blog.createdFor,
    at: timestampFromDate(blog.createdAt),
  });
}

/** blog.schedule.failed (once: from the transaction that moves the schedule from pending to failed) or .applied. */
export function scheduleFinished(em: EntityManager, schedule: ScheduleRow, failure?: { code: string; detail: string }) {
  return recordEvent(em, failure ? SCHEDULE_FAILED : SCHEDULE_APPLIED, ScheduleEventSchema, {
    scheduleId: schedule.id,
    postId: schedule.postId,
    action: schedule.action,
    at: timestampFromDate(schedule.at),
    revision: schedule.revision,
    code: failure?.code ?? "",
    detail: failure?.detail ?? "",
  });
}
