import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";
import { authorProperties } from "../../kit/db/author-columns.js";
import { immutableTrigger } from "../../kit/revisions/immutable.js";

/** News's copy of a sources item: its dedupe outcome and whether it was removed upstream. */
export const SourceItemRow = defineEntity({
  name: "SourceItemRow",
  tableName: "source_items",
  indexes: [{ name: "source_items_by_url", properties: ["canonicalUrl"] }],
  checks: [{ name: "source_items_dedupe_check", expression: "dedupe in ('unique', 'duplicate')" }],
  properties: {
    id: p.text().primary(),
    sourceKey: p.text(),
    canonicalUrl: p.text(),
    title: p.text(),
    titleKey: p.text(),
    publishedAt: p.datetime().nullable(),
    revision: p.integer(),
    changeOrder: p.bigint(),
    dedupe: p.text(),
    duplicateOf: p.text().nullable(),
    removedAt: p.datetime().nullable(),
    removedReason: p.text().nullable(),
    receivedAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type SourceItemRow = InferEntity<typeof SourceItemRow>;

/** A cluster: active, merged into another, or dissolved (emptied by a reversal). */
export const ClusterRow = defineEntity({
  name: "ClusterRow",
  tableName: "clusters",
  indexes: [{ name: "clusters_by_change", properties: ["updatedAt", "id"] }],
  checks: [{ name: "clusters_state_check", expression: "state in ('active', 'merged', 'dissolved')" }],
  properties: {
    id: p.text().primary(),
    state: p.text(),
    mergedInto: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type ClusterRow = InferEntity<typeof ClusterRow>;

/** An item's membership (one cluster per item) with its stored explanation. */
export const ClusterMemberRow = defineEntity({
  name: "ClusterMemberRow",
  tableName: "cluster_members",
  indexes: [{ name: "cluster_members_by_cluster", properties: ["clusterId", "itemId"] }],
  properties: {
    itemId: p.text().primary(),
    clusterId: p.text(),
    method: p.text(),
    evidence: p.text(),
    score: p.integer(),
    by: p.text().nullable(),
    at: p.datetime(),
  },
});
export type ClusterMemberRow = InferEntity<typeof ClusterMemberRow>;

/** An audited change of clusters: the moves and cluster states before and after, to reverse exactly. */
export const ClusterAuditRow = defineEntity({
  name: "ClusterAuditRow",
  tableName: "cluster_audits",
  indexes: [{ name: "cluster_audits_by_cluster", properties: ["clusterId", "id"] }],
  checks: [{ name: "cluster_audits_action_check", expression: "action in ('merge', 'split', 'reverse')" }],
  properties: {
    id: p.text().primary(),
    action: p.text(),
    clusterId: p.text(),
    moves: p.json<unknown>(),
    clusters: p.json<unknown>(),
    reason: p.text(),
    by: p.text(),
    at: p.datetime(),
    reverses: p.text().nullable(),
    reversedBy: p.text().nullable(),
  },
});
export type ClusterAuditRow = InferEntity<typeof ClusterAuditRow>;

/** Which items an audit moved, to find a later change touching the same items. */
export const ClusterAuditItemRow = defineEntity({
  name: "ClusterAuditItemRow",
  tableName: "cluster_audit_items",
  indexes: [{ name: "cluster_audit_items_by_item", properties: ["itemId", "auditId"] }],
  properties: {
    auditId: p.text().primary(),
    itemId: p.text().primary(),
  },
});
export type ClusterAuditItemRow = InferEntity<typeof ClusterAuditItemRow>;

/** A story: its state, revision pointers and the next source number (only grows). */
export const StoryRow = defineEntity({
  name: "StoryRow",
  tableName: "stories",
  indexes: [{ name: "stories_by_state", properties: ["state", "id"] }],
  checks: [{ name: "stories_state_check", expression: "state in ('draft', 'published', 'unpublished', 'retracted')" }],
  properties: {
    id: p.text().primary(),
    clusterId: p.text(),
    state: p.text(),
    latestRevision: p.integer(),
    publishedRevision: p.integer().nullable(),
    nextSourceNumber: p.integer(),
    version: p.integer(),
    createdBy: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
    retractionNote: p.text().nullable(),
    retractedBy: p.text().nullable(),
    retractedAt: p.datetime().nullable(),
  },
});
export type StoryRow = InferEntity<typeof StoryRow>;

/** An entry of a story's source table; a number is never reused, a detached entry stays. */
export const StorySourceRow = defineEntity({
  name: "StorySourceRow",
  tableName: "story_sources",
  uniques: [{ name: "story_sources_one_live", properties: ["storyId", "itemId"], where: "detached_at is null" }],
  properties: {
    storyId: p.text().primary(),
    number: p.integer().primary(),
    itemId: p.text(),
    perspectiveId: p.text().nullable(),
    attachedBy: p.text().nullable(),
    attachedAt: p.datetime(),
    detachedBy: p.text().nullable(),
    detachedAt: p.datetime().nullable(),
  },
});
export type StorySourceRow = InferEntity<typeof StorySourceRow>;

/** A perspective grouping, editor-labelled. */
export const PerspectiveRow = defineEntity({
  name: "PerspectiveRow",
  tableName: "story_perspectives",
  indexes: [{ name: "story_perspectives_by_story", properties: ["storyId", "id"] }],
  properties: {
    id: p.text().primary(),
    storyId: p.text(),
    label: p.text(),
    createdBy: p.text(),
    createdAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});
export type PerspectiveRow = InferEntity<typeof PerspectiveRow>;

/** A timeline entry: the date as stated, resting on one source number. */
export const TimelineRow = defineEntity({
  name: "TimelineRow",
  tableName: "story_timeline",
  indexes: [{ name: "story_timeline_by_story", properties: ["storyId", "id"] }],
  properties: {
    id: p.text().primary(),
    storyId: p.text(),
    statedDate: p.text(),
    text: p.text(),
    sourceNumber: p.integer(),
    createdBy: p.text(),
    createdAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});
export type TimelineRow = InferEntity<typeof TimelineRow>;

/** An immutable revision with its snapshot of source table, timeline and perspectives. */
export const RevisionRow = defineEntity({
  name: "RevisionRow",
  tableName: "story_revisions",
  triggers: [immutableTrigger("story_revisions")],
  checks: [{ name: "story_revisions_author_kind_check", expression: "author_kind in ('person', 'ai', 'system')" }],
  properties: {
    storyId: p.text().primary(),
    n: p.integer().primary(),
    headline: p.json<unknown>(),
    paragraphs: p.json<unknown>(),
    ...authorProperties(),
    aiAssisted: p.boolean(),
    basedOn: p.integer(),
    answersFlags: p.json<string[]>(),
    snapshot: p.json<unknown>(),
    aiDraftId: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type RevisionRow = InferEntity<typeof RevisionRow>;

/** A person's approval of a revision (insert-only, one per revision). */
export const ApprovalRow = defineEntity({
  name: "ApprovalRow",
  tableName: "story_approvals",
  triggers: [immutableTrigger("story_approvals")],
  properties: {
    storyId: p.text().primary(),
    n: p.integer().primary(),
    approver: p.text(),
    note: p.text(),
    at: p.datetime(),
  },
});
export type ApprovalRow = InferEntity<typeof ApprovalRow>;

/** An editorial or upstream flag, open until a published revision resolves it. */
export const FlagRow = defineEntity({
  name: "FlagRow",
  tableName: "story_flags",
  indexes: [{ name: "story_flags_by_story", properties: ["storyId", "id"] }],
  properties: {
    id: p.text().primary(),
    storyId: p.text(),
    kind: p.text(),
    itemId: p.text().nullable(),
    sourceNumber: p.integer().nullable(),
    note: p.text(),
    blocking: p.boolean(),
    createdBy: p.text().nullable(),
    createdAt: p.datetime(),
    resolvedRevision: p.integer().nullable(),
    resolvedAt: p.datetime().nullable(),
  },
});
export type FlagRow = InferEntity<typeof FlagRow>;

/** A correction or update note, pending until the next publish. */
export const NoteRow = defineEntity({
  name: "NoteRow",
  tableName: "story_notes",
  indexes: [{ name: "story_notes_by_story", properties: ["storyId", "id"] }],
  checks: [{ name: "story_notes_kind_check", expression: "kind in ('correction', 'update')" }],
  properties: {
    id: p.text().primary(),
    storyId: p.text(),
    revision: p.integer(),
    kind: p.text(),
    text: p.text(),
    createdBy: p.text(),
    createdAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
  },
});
export type NoteRow = InferEntity<typeof NoteRow>;

/** A request for an AI draft, fulfilled by the AI revision answering it. */
export const AiDraftRow = defineEntity({
  name: "AiDraftRow",
  tableName: "ai_drafts",
  indexes: [{ name: "ai_drafts_by_story", properties: ["storyId", "id"] }],
  checks: [{ name: "ai_drafts_state_check", expression: "state in ('requested', 'fulfilled')" }],
  properties: {
    id: p.text().primary(),
    storyId: p.text(),
    baseRevision: p.integer(),
    instructions: p.text(),
    requestedBy: p.text(),
    state: p.text(),
    revision: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});
export type AiDraftRow = InferEntity<typeof AiDraftRow>;

export const entities = [
  SourceItemRow,
  ClusterRow,
  ClusterMemberRow,
  ClusterAuditRow,
  ClusterAuditItemRow,
  StoryRow,
  StorySourceRow,
  PerspectiveRow,
  TimelineRow,
  RevisionRow,
  ApprovalRow,
  FlagRow,
  NoteRow,
  AiDraftRow,
];
