import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";
import { authorProperties } from "../../kit/db/author-columns.js";
import { immutableTrigger } from "../../kit/revisions/immutable.js";

/** An entity. `name_key` is its name normalised for candidates; `merged_into` the target while merged. */
export const EntityRow = defineEntity({
  name: "EntityRow",
  tableName: "entities",
  indexes: [
    { name: "entities_by_name", properties: ["nameKey"] },
    { name: "entities_by_target", properties: ["mergedInto"] },
  ],
  checks: [{ name: "entities_state_check", expression: "state in ('active', 'merged', 'deleted')" }],
  properties: {
    id: p.text().primary(),
    slug: p.text(),
    name: p.text(),
    nameKey: p.text(),
    description: p.text(),
    state: p.text(),
    mergedInto: p.text().nullable(),
    limitation: p.text(),
    verification: p.text(),
    notesUpdatedBy: p.text(),
    notesUpdatedAt: p.datetime().nullable(),
    summaryRevisions: p.integer(),
    version: p.integer(),
    createdBy: p.text(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type EntityRow = InferEntity<typeof EntityRow>;

/** An alias; identifiers (every kind but name) belong to one entity at most, so resolution is deterministic. */
export const AliasRow = defineEntity({
  name: "AliasRow",
  tableName: "aliases",
  uniques: [{ name: "aliases_one_owner", properties: ["kind", "normalized"], where: "kind <> 'name'" }],
  indexes: [
    { name: "aliases_by_value", properties: ["kind", "normalized"] },
    { name: "aliases_by_entity", properties: ["entityId"] },
  ],
  checks: [
    {
      name: "aliases_kind_check",
      expression: "kind in ('name', 'url', 'gtin', 'sku', 'mpn', 'source', 'external_id')",
    },
  ],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    kind: p.text(),
    value: p.text(),
    normalized: p.text(),
    createdBy: p.text(),
    createdAt: p.datetime(),
  },
});
export type AliasRow = InferEntity<typeof AliasRow>;

/** A typed link to another entity or to another service's object (stored unchecked). */
export const LinkRow = defineEntity({
  name: "LinkRow",
  tableName: "links",
  indexes: [{ name: "links_by_entity", properties: ["entityId"] }],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    type: p.text(),
    targetEntity: p.text(),
    targetService: p.text(),
    targetKind: p.text(),
    targetId: p.text(),
    createdBy: p.text(),
    createdAt: p.datetime(),
  },
});
export type LinkRow = InferEntity<typeof LinkRow>;

/** An exclusion of a signal or a source from aggregates, with its visible reason. */
export const ExclusionRow = defineEntity({
  name: "ExclusionRow",
  tableName: "exclusions",
  indexes: [{ name: "exclusions_by_entity", properties: ["entityId"] }],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    signalId: p.text(),
    sourceKey: p.text(),
    reason: p.text(),
    createdBy: p.text(),
    createdAt: p.datetime(),
  },
});
export type ExclusionRow = InferEntity<typeof ExclusionRow>;

/** A signal with provenance: attributed to the entity it was recorded for, never rewritten. */
export const SignalRow = defineEntity({
  name: "SignalRow",
  tableName: "signals",
  uniques: [{ name: "signals_one_per_ref", properties: ["sourceKey", "sourceRef"] }],
  indexes: [{ name: "signals_by_entity", properties: ["entityId"] }],
  checks: [{ name: "signals_kind_check", expression: "kind in ('rating', 'mention')" }],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    kind: p.text(),
    score: p.integer(),
    scale: p.integer(),
    text: p.text(),
    sourceKey: p.text(),
    sourceRef: p.text(),
    url: p.text(),
    observedAt: p.datetime().nullable(),
    ingestedBy: p.text(),
    itemId: p.text(),
    recordedAt: p.datetime(),
  },
});
export type SignalRow = InferEntity<typeof SignalRow>;

/** A merge: the audited merged_into link (who, when, why), ended by a split (who, when, why). */
export const MergeRow = defineEntity({
  name: "MergeRow",
  tableName: "merges",
  indexes: [{ name: "merges_by_entity", properties: ["entityId"] }],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    intoId: p.text(),
    mergedBy: p.text(),
    mergedAt: p.datetime(),
    reason: p.text(),
    splitBy: p.text().nullable(),
    splitAt: p.datetime().nullable(),
    splitReason: p.text().nullable(),
  },
});
export type MergeRow = InferEntity<typeof MergeRow>;

/** A pro or con as stored. */
export interface PointColumn {
  text: string;
  citations: string[];
}

/** The columns of a summary revision that change in place: its review, the split's flag, publication. */
const SUMMARY_STATE_COLUMNS = [
  "state",
  "reviewed_by",
  "reviewed_at",
  "approved",
  "review_note",
  "flag",
  "published_at",
];

/** A numbered summary revision: its content never changes (a trigger refuses it); its review state does. */
export const SummaryRevisionRow = defineEntity({
  name: "SummaryRevisionRow",
  tableName: "summary_revisions",
  triggers: [immutableTrigger("summary_revisions", { mutable: SUMMARY_STATE_COLUMNS })],
  checks: [
    {
      name: "summary_revisions_state_check",
      expression: "state in ('proposed', 'approved', 'rejected', 'published', 'unpublished')",
    },
    { name: "summary_revisions_author_kind_check", expression: "author_kind in ('person', 'ai', 'system')" },
  ],
  properties: {
    entityId: p.text().primary(),
    revision: p.integer().primary(),
    state: p.text(),
    overview: p.text(),
    pros: p.json<PointColumn[]>(),
    cons: p.json<PointColumn[]>(),
    ...authorProperties(),
    reviewedBy: p.text().nullable(),
    reviewedAt: p.datetime().nullable(),
    approved: p.boolean().nullable(),
    reviewNote: p.text(),
    flag: p.text(),
    createdAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
  },
});
export type SummaryRevisionRow = InferEntity<typeof SummaryRevisionRow>;

/** A correction in the editors' queue. */
export const CorrectionRow = defineEntity({
  name: "CorrectionRow",
  tableName: "corrections",
  indexes: [{ name: "corrections_by_state", properties: ["state", "id"] }],
  checks: [
    { name: "corrections_state_check", expression: "state in ('open', 'accepted', 'rejected', 'duplicate')" },
    {
      name: "corrections_target_kind_check",
      expression: "target_kind in ('entity', 'alias', 'signal', 'summary', 'aggregate')",
    },
  ],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    targetKind: p.text(),
    targetId: p.text(),
    text: p.text(),
    evidenceUrl: p.text(),
    submittedBy: p.text(),
    state: p.text(),
    editorNote: p.text(),
    triagedBy: p.text(),
    createdAt: p.datetime(),
    triagedAt: p.datetime().nullable(),
  },
});
export type CorrectionRow = InferEntity<typeof CorrectionRow>;

/** A sources item whose entity is ambiguous, awaiting an editor. */
export const QueueItemRow = defineEntity({
  name: "QueueItemRow",
  tableName: "queue_items",
  uniques: [{ name: "queue_items_one_per_item", properties: ["itemId"] }],
  indexes: [{ name: "queue_items_by_state", properties: ["state", "id"] }],
  checks: [
    { name: "queue_items_state_check", expression: "state in ('pending', 'confirmed', 'ignored')" },
    { name: "queue_items_reason_check", expression: "reason in ('conflict', 'name_only')" },
  ],
  properties: {
    id: p.text().primary(),
    itemId: p.text(),
    sourceKey: p.text(),
    url: p.text(),
    title: p.text(),
    reason: p.text(),
    candidates: p.json<string[]>(),
    state: p.text(),
    entityId: p.text(),
    signalId: p.text(),
    decidedBy: p.text(),
    createdAt: p.datetime(),
    decidedAt: p.datetime().nullable(),
  },
});
export type QueueItemRow = InferEntity<typeof QueueItemRow>;

/** One editorial action on an entity: insert-only. */
export const HistoryRow = defineEntity({
  name: "HistoryRow",
  tableName: "history",
  indexes: [{ name: "history_by_entity", properties: ["entityId", "id"] }],
  properties: {
    id: p.text().primary(),
    entityId: p.text(),
    action: p.text(),
    actor: p.text(),
    at: p.datetime(),
    detail: p.text(),
  },
});
export type HistoryRow = InferEntity<typeof HistoryRow>;

export const entities = [
  EntityRow,
  AliasRow,
  LinkRow,
  ExclusionRow,
  SignalRow,
  MergeRow,
  SummaryRevisionRow,
  CorrectionRow,
  QueueItemRow,
  HistoryRow,
];
