import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** A space: its key is the path's {space}. Created and changed only by the admin RPC and PF_SPACE_SEED. */
export const SpaceRow = defineEntity({
  name: "SpaceRow",
  tableName: "spaces",
  checks: [{ name: "spaces_visibility_check", expression: "visibility in ('public', 'members', 'staff')" }],
  properties: {
    key: p.text().primary(),
    title: p.text(),
    description: p.text(),
    visibility: p.text(),
    membersOnly: p.boolean(),
    vipCreator: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type SpaceRow = InferEntity<typeof SpaceRow>;

/**
 * A thread. `author` is the person, or for AI output the service that sent it
 * (never shown as an author). `score` is the sum of its votes and `hot` its
 * rank (domain/ordering.ts), both written in each vote's transaction under
 * the thread's row lock. A deleted thread keeps its row and replies.
 */
export const ThreadRow = defineEntity({
  name: "ThreadRow",
  tableName: "threads",
  uniques: [{ name: "threads_slug", properties: ["space", "slug"] }],
  indexes: [
    { name: "threads_new", properties: ["space", "pinned", "createdAt", "id"], where: "deleted_at is null" },
    { name: "threads_hot", properties: ["space", "pinned", "hot", "id"], where: "deleted_at is null" },
    {
      name: "threads_top",
      properties: ["space", "pinned", "score", "createdAt", "id"],
      where: "deleted_at is null",
    },
  ],
  checks: [{ name: "threads_author_kind_check", expression: "author_kind in ('person', 'ai')" }],
  properties: {
    id: p.text().primary(),
    space: p.text(),
    slug: p.text(),
    title: p.text(),
    authorKind: p.text(),
    author: p.text(),
    pinned: p.boolean(),
    locked: p.boolean(),
    deletedAt: p.datetime().nullable(),
    score: p.integer(),
    hot: p.double(),
    replyCount: p.integer(),
    createdAt: p.datetime(),
    lastActivityAt: p.datetime(),
  },
});
export type ThreadRow = InferEntity<typeof ThreadRow>;

/** A post: a thread's first post (its body) or a reply. A deleted post keeps its row as a tombstone. */
export const PostRow = defineEntity({
  name: "PostRow",
  tableName: "posts",
  indexes: [{ name: "posts_by_thread", properties: ["threadId", "createdAt", "id"] }],
  checks: [{ name: "posts_author_kind_check", expression: "author_kind in ('person', 'ai')" }],
  properties: {
    id: p.text().primary(),
    threadId: p.text(),
    first: p.boolean(),
    authorKind: p.text(),
    author: p.text(),
    body: p.text(),
    revision: p.integer(),
    createdAt: p.datetime(),
    editedAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
  },
});
export type PostRow = InferEntity<typeof PostRow>;

/** One person's vote on one thread: the primary key makes it one, however many arrive at once. */
export const VoteRow = defineEntity({
  name: "VoteRow",
  tableName: "votes",
  checks: [{ name: "votes_value_check", expression: "abs(value) = 1" }],
  properties: {
    threadId: p.text().primary(),
    person: p.text().primary(),
    value: p.smallint(),
    votedAt: p.datetime(),
  },
});
export type VoteRow = InferEntity<typeof VoteRow>;

/** A moderation action: who (staff person or service), the service that relayed it to community, and why. */
export const ModerationAuditRow = defineEntity({
  name: "ModerationAuditRow",
  tableName: "moderation_audit",
  properties: {
    id: p.text().primary(),
    action: p.text(),
    threadId: p.text(),
    postId: p.text(),
    actor: p.text(),
    relayedBy: p.text(),
    reason: p.text(),
    createdAt: p.datetime(),
  },
});
export type ModerationAuditRow = InferEntity<typeof ModerationAuditRow>;

export const entities = [SpaceRow, ThreadRow, PostRow, VoteRow, ModerationAuditRow];
