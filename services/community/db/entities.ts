import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";
import { authorProperties } from "../../kit/db/author-columns.js";

/** A paste. `owner` is the person it was written for (null for AI output); censoring is sticky. */
export const PasteRow = defineEntity({
  name: "PasteRow",
  tableName: "pastes",
  indexes: [{ name: "pastes_by_owner", properties: ["owner", "createdAt", "id"] }],
  properties: {
    id: p.text().primary(),
    slug: p.text(),
    title: p.text(),
    kind: p.text(),
    body: p.text(),
    screenshot: p.text().nullable(),
    language: p.text(),
    ...authorProperties(),
    owner: p.text().nullable(),
    forkedFrom: p.text().nullable(),
    state: p.text(),
    censorReason: p.text().nullable(),
    likes: p.integer(),
    copies: p.integer(),
    forks: p.integer(),
    revision: p.integer(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type PasteRow = InferEntity<typeof PasteRow>;

/** One like per person and paste. */
export const PasteLikeRow = defineEntity({
  name: "PasteLikeRow",
  tableName: "paste_likes",
  properties: {
    pasteId: p.text().primary(),
    person: p.text().primary(),
    createdAt: p.datetime(),
  },
});
export type PasteLikeRow = InferEntity<typeof PasteLikeRow>;

/** One counted copy per person and paste. */
export const PasteCopyRow = defineEntity({
  name: "PasteCopyRow",
  tableName: "paste_copies",
  properties: {
    pasteId: p.text().primary(),
    person: p.text().primary(),
    createdAt: p.datetime(),
  },
});
export type PasteCopyRow = InferEntity<typeof PasteCopyRow>;

/** A comment thread: exactly one per EntityRef (the unique constraint settles concurrent resolves). */
export const ThreadRow = defineEntity({
  name: "ThreadRow",
  tableName: "threads",
  uniques: [{ name: "threads_one_per_ref", properties: ["refService", "refKind", "refId"] }],
  properties: {
    id: p.text().primary(),
    refService: p.text(),
    refKind: p.text(),
    refId: p.text(),
    visibility: p.text(),
    comments: p.integer(),
    createdAt: p.datetime(),
  },
});
export type ThreadRow = InferEntity<typeof ThreadRow>;

/** A comment; deleting keeps the row as a tombstone (body emptied). */
export const CommentRow = defineEntity({
  name: "CommentRow",
  tableName: "comments",
  indexes: [{ name: "comments_by_thread", properties: ["threadId", "createdAt", "id"] }],
  properties: {
    id: p.text().primary(),
    threadId: p.text(),
    ...authorProperties(),
    body: p.text(),
    score: p.integer(),
    createdAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
    deletedBy: p.text().nullable(),
  },
});
export type CommentRow = InferEntity<typeof CommentRow>;

/** One vote per person and comment: +1 or -1. */
export const CommentVoteRow = defineEntity({
  name: "CommentVoteRow",
  tableName: "comment_votes",
  properties: {
    commentId: p.text().primary(),
    voter: p.text().primary(),
    value: p.smallint(),
    createdAt: p.datetime(),
  },
});
export type CommentVoteRow = InferEntity<typeof CommentVoteRow>;

/** A pulse item: one per EntityRef; origin, actor and occurred_at are the first record's (provenance stands). */
export const PulseItemRow = defineEntity({
  name: "PulseItemRow",
  tableName: "pulse_items",
  uniques: [{ name: "pulse_items_one_per_ref", properties: ["refService", "refKind", "refId"] }],
  indexes: [{ name: "pulse_items_newest", properties: ["occurredAt", "id"] }],
  properties: {
    id: p.text().primary(),
    refService: p.text(),
    refKind: p.text(),
    refId: p.text(),
    title: p.text(),
    url: p.text(),
    origin: p.text(),
    actor: p.text().nullable(),
    occurredAt: p.datetime(),
    recordedAt: p.datetime(),
    updatedAt: p.datetime(),
    retractedAt: p.datetime().nullable(),
  },
});
export type PulseItemRow = InferEntity<typeof PulseItemRow>;

/**
 * One moderation action: actor, relaying service, reason. Actions on another
 * service's objects (forum posts and threads) stay `pending` until that
 * service applied them (`applied`) or refused them (`failed`); `request_key`
 * makes a retry with the same idempotency key find the same record.
 */
export const ModerationRow = defineEntity({
  name: "ModerationRow",
  tableName: "moderation_records",
  uniques: [{ name: "moderation_records_request_key", properties: ["requestKey"] }],
  indexes: [{ name: "moderation_records_newest", properties: ["createdAt", "id"] }],
  properties: {
    id: p.text().primary(),
    action: p.text(),
    targetService: p.text(),
    targetKind: p.text(),
    targetId: p.text(),
    actor: p.text(),
    person: p.text().nullable(),
    relayedBy: p.text(),
    reason: p.text(),
    value: p.text(),
    body: p.text(),
    status: p.text(),
    failure: p.text(),
    requestKey: p.text().nullable(),
    createdAt: p.datetime(),
    settledAt: p.datetime().nullable(),
  },
});
export type ModerationRow = InferEntity<typeof ModerationRow>;

/** A chat-platform relay: the webhook URL sealed (never shown), its last 4 characters for the mask. */
export const RelayRow = defineEntity({
  name: "RelayRow",
  tableName: "relays",
  properties: {
    id: p.text().primary(),
    platform: p.text(),
    webhookSealed: p.text(),
    webhookLast4: p.text(),
    scope: p.text(),
    enabled: p.boolean(),
    updatedAt: p.datetime(),
  },
});
export type RelayRow = InferEntity<typeof RelayRow>;

export const entities = [
  PasteRow,
  PasteLikeRow,
  PasteCopyRow,
  ThreadRow,
  CommentRow,
  CommentVoteRow,
  PulseItemRow,
  ModerationRow,
  RelayRow,
];
