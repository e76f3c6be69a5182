import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";
import { authorProperties } from "../../kit/db/author-columns.js";
import { immutableTrigger } from "../../kit/revisions/immutable.js";

/** A member blog: one per usr_ subject (`created_for`), its settings and theme. */
export const BlogRow = defineEntity({
  name: "BlogRow",
  tableName: "blogs",
  uniques: [
    { name: "blogs_handle", properties: ["handle"] },
    { name: "blogs_one_per_subject", properties: ["createdFor"] },
  ],
  properties: {
    id: p.text().primary(),
    handle: p.text(),
    createdFor: p.text(),
    title: p.text(),
    description: p.text(),
    language: p.text(),
    theme: p.text(),
    feedRss: p.boolean(),
    feedAtom: p.boolean(),
    feedJson: p.boolean(),
    feedItems: p.integer(),
    feedFullText: p.boolean(),
    revision: p.bigint(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type BlogRow = InferEntity<typeof BlogRow>;

/** A member of a blog: owner, editor or author. */
export const MemberRow = defineEntity({
  name: "MemberRow",
  tableName: "members",
  checks: [{ name: "members_role_check", expression: "role in ('owner', 'editor', 'author')" }],
  properties: {
    blogId: p.text().primary(),
    subject: p.text().primary(),
    role: p.text(),
    addedAt: p.datetime(),
  },
});
export type MemberRow = InferEntity<typeof MemberRow>;

/** A post: its state, pointers to its current and published revisions, and its settings. */
export const PostRow = defineEntity({
  name: "PostRow",
  tableName: "posts",
  checks: [
    { name: "posts_state_check", expression: "state in ('draft', 'published', 'unpublished', 'deleted')" },
    { name: "posts_visibility_check", expression: "visibility in ('public', 'members-only', 'private')" },
  ],
  indexes: [{ name: "posts_by_blog", properties: ["blogId", "createdAt", "id"] }],
  properties: {
    id: p.text().primary(),
    blogId: p.text(),
    ...authorProperties(),
    slug: p.text(),
    state: p.text(),
    visibility: p.text(),
    taxonomy: p.json<string[]>(),
    series: p.text(),
    attachments: p.json<string[]>(),
    listed: p.boolean(),
    currentRevision: p.integer(),
    publishedRevision: p.integer().nullable(),
    version: p.bigint(),
    publishedAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type PostRow = InferEntity<typeof PostRow>;

/** One revision of a post, never changed once written (insert-only under a trigger). */
export const RevisionRow = defineEntity({
  name: "RevisionRow",
  tableName: "post_revisions",
  triggers: [immutableTrigger("post_revisions")],
  checks: [{ name: "post_revisions_n_check", expression: "n >= 1" }],
  properties: {
    postId: p.text().primary(),
    n: p.integer().primary(),
    title: p.text(),
    summary: p.text(),
    body: p.text(),
    ...authorProperties(),
    reviewRequired: p.boolean(),
    basedOn: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});
export type RevisionRow = InferEntity<typeof RevisionRow>;

/** A recorded review of one revision (insert-only): the newest per revision counts. */
export const ReviewRow = defineEntity({
  name: "ReviewRow",
  tableName: "post_reviews",
  triggers: [immutableTrigger("post_reviews")],
  checks: [{ name: "post_reviews_verdict_check", expression: "verdict in ('approve', 'reject')" }],
  indexes: [{ name: "post_reviews_by_revision", properties: ["postId", "revision", "at"] }],
  properties: {
    id: p.text().primary(),
    postId: p.text(),
    revision: p.integer(),
    reviewer: p.text(),
    verdict: p.text(),
    note: p.text(),
    at: p.datetime(),
  },
});
export type ReviewRow = InferEntity<typeof ReviewRow>;

/** A scheduled publish or unpublish: unique per (post, action, time, revision), and who scheduled it. */
export const ScheduleRow = defineEntity({
  name: "ScheduleRow",
  tableName: "schedules",
  uniques: [{ name: "schedules_once", properties: ["postId", "action", "at", "revision"] }],
  checks: [
    { name: "schedules_action_check", expression: "action in ('publish', 'unpublish')" },
    { name: "schedules_state_check", expression: "state in ('pending', 'applied', 'failed', 'cancelled')" },
  ],
  indexes: [
    { name: "schedules_due", properties: ["state", "at"] },
    { name: "schedules_by_person", properties: ["scheduledBy", "state"] },
  ],
  properties: {
    id: p.text().primary(),
    postId: p.text(),
    action: p.text(),
    at: p.datetime(),
    revision: p.integer(),
    /** The person who scheduled it: applied only while they may still publish the post. */
    scheduledBy: p.text(),
    state: p.text(),
    failure: p.text(),
    createdAt: p.datetime(),
    doneAt: p.datetime().nullable(),
  },
});
export type ScheduleRow = InferEntity<typeof ScheduleRow>;

export const entities = [BlogRow, MemberRow, PostRow, RevisionRow, ReviewRow, ScheduleRow];
