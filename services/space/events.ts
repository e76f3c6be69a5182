import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { PostEventSchema, ThreadEventSchema } from "../../gen/pf/space/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import type { StoredPost } from "./db/posts.js";
import { visibilityToProto, type StoredSpace } from "./db/spaces.js";
import type { StoredThread } from "./db/threads.js";

/** What happened to a thread: the subject's last token. */
export type ThreadAction = "created" | "deleted" | "pinned" | "unpinned" | "locked" | "unlocked" | "voted";
/** What happened to a post. */
export type PostAction = "created" | "edited" | "deleted";

/** Designed subjects (the spec names none for the forum): space.thread.<action> and space.post.<action>. */
export const threadSubject = (action: ThreadAction) => `space.thread.${action}`;
export const postSubject = (action: PostAction) => `space.post.${action}`;

/** space.thread.<action>, in the transaction of the change (the outbox). */
export function threadChanged(
  em: EntityManager,
  action: ThreadAction,
  facts: { space: StoredSpace; thread: StoredThread; actor: string; at: Date },
) {
  const { space, thread } = facts;
  return recordEvent(em, threadSubject(action), ThreadEventSchema, {
    action,
    threadId: thread.id,
    space: space.key,
    visibility: visibilityToProto(space.visibility),
    membersOnly: space.membersOnly,
    slug: thread.slug,
    author: thread.authorKind === "person" ? thread.author : "",
    ai: thread.authorKind === "ai",
    actor: facts.actor,
    score: thread.score,
    at: timestampFromDate(facts.at),
  });
}

/** space.post.<action>, in the transaction of the change. */
export function postChanged(
  em: EntityManager,
  action: PostAction,
  facts: { space: string; post: StoredPost; actor: string; at: Date },
) {
  const { post } = facts;
  return recordEvent(em, postSubject(action), PostEventSchema, {
    action,
    postId: post.id,
    threadId: post.threadId,
    space: facts.space,
    author: post.authorKind === "person" ? post.author : "",
    ai: post.authorKind === "ai",
    actor: facts.actor,
    revision: post.revision,
    at: timestampFromDate(facts.at),
  });
}
