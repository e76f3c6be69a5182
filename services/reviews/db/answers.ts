import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type Aggregate,
  AggregateSchema,
  type Correction,
  CorrectionSchema,
  type Entity,
  EntitySchema,
  type HistoryEntry,
  HistoryEntrySchema,
  type MergeLink,
  MergeLinkSchema,
  type QueueItem,
  QueueItemSchema,
  type Signal,
  SignalSchema,
  type SummaryRevision,
  SummaryRevisionSchema,
} from "../../../gen/pf/reviews/v1/resources_pb.js";
import { approvalToProto, authorFromColumns, authorshipToProto } from "../../kit/auth/authorship.js";
import { AGGREGATE_METHOD } from "../domain/aggregate.js";
import { aliasesOf, currentMerges, linksOf, mergedFrom } from "./catalog.js";
import type {
  CorrectionRow,
  EntityRow,
  HistoryRow,
  MergeRow,
  QueueItemRow,
  SignalRow,
  SummaryRevisionRow,
} from "./entities.js";
import { aggregateOfTree, exclusionsOf } from "./signals.js";

const at = (date: Date | null | undefined) => (date ? timestampFromDate(new Date(date)) : undefined);

/** Entities as answered: aliases, links, trust metadata and the merge link with them. */
export async function entityAnswers(em: EntityManager, rows: EntityRow[]): Promise<Entity[]> {
  const ids = rows.map((row) => row.id);
  const [aliases, links, exclusions, merges, children] = await Promise.all([
    aliasesOf(em, ids),
    linksOf(em, ids),
    exclusionsOf(em, ids),
    currentMerges(em, ids),
    mergedFrom(em, ids),
  ]);
  return rows.map((row) => {
    const merge = merges.get(row.id);
    return create(EntitySchema, {
      id: row.id,
      slug: row.slug,
      name: row.name,
      description: row.description,
      state: row.state,
      mergedInto: row.state === "merged" && merge ? mergeToProto(merge) : undefined,
      mergedFrom: children.get(row.id) ?? [],
      aliases: aliases
        .filter((alias) => alias.entityId === row.id)
        .map((alias) => ({ ...alias, createdAt: at(alias.createdAt) })),
      links: links
        .filter((link) => link.entityId === row.id)
        .map((link) => ({
          id: link.id,
          type: link.type,
          targetEntity: link.targetEntity,
          targetRef: link.targetService
            ? { service: link.targetService, kind: link.targetKind, id: link.targetId }
            : undefined,
          createdBy: link.createdBy,
          createdAt: at(link.createdAt),
        })),
      notes: {
        limitation: row.limitation,
        verification: row.verification,
        updatedBy: row.notesUpdatedBy,
        updatedAt: at(row.notesUpdatedAt),
      },
      exclusions: exclusions
        .filter((exclusion) => exclusion.entityId === row.id)
        .map((exclusion) => ({ ...exclusion, createdAt: at(exclusion.createdAt) })),
      createdAt: at(row.createdAt),
    });
  });
}

/** One entity as answered. */
export async function entityAnswer(em: EntityManager, row: EntityRow): Promise<Entity> {
  return (await entityAnswers(em, [row]))[0];
}

/** A merge link as answered. */
export function mergeToProto(row: MergeRow): MergeLink {
  return create(MergeLinkSchema, {
    id: row.id,
    entityId: row.entityId,
    into: row.intoId,
    mergedBy: row.mergedBy,
    mergedAt: at(row.mergedAt),
    reason: row.reason,
    splitBy: row.splitBy ?? "",
    splitAt: at(row.splitAt),
    splitReason: row.splitReason ?? "",
  });
}

/** The aggregate of an entity over its tree (the entity and those merged into it). */
export async function aggregateAnswer(em: EntityManager, entityId: string, tree: string[]): Promise<Aggregate> {
  const computed = await aggregateOfTree(em, tree);
  return create(AggregateSchema, {
    entityId,
    score: computed.score,
    count: computed.inputs.length,
    inputs: computed.inputs.map(({ id, entityId: of, sourceKey, score, scale }) => ({
      signalId: id,
      entityId: of,
      sourceKey,
      score,
      scale,
    })),
    excluded: computed.excluded.map(({ id, entityId: of, sourceKey, exclusionId, reason }) => ({
      signalId: id,
      entityId: of,
      sourceKey,
      exclusionId,
      reason,
    })),
    entityIds: tree,
    method: AGGREGATE_METHOD,
  });
}

/** A signal as answered, with its attribution and provenance. */
export function signalToProto(row: SignalRow): Signal {
  return create(SignalSchema, {
    id: row.id,
    entityId: row.entityId,
    kind: row.kind,
    score: row.score,
    scale: row.scale,
    text: row.text,
    provenance: {
      sourceKey: row.sourceKey,
      sourceRef: row.sourceRef,
      url: row.url,
      observedAt: at(row.observedAt),
      ingestedBy: row.ingestedBy,
      itemId: row.itemId,
    },
    recordedAt: at(row.recordedAt),
  });
}

/** A summary revision as answered. */
export function revisionToProto(row: SummaryRevisionRow): SummaryRevision {
  return create(SummaryRevisionSchema, {
    entityId: row.entityId,
    revision: row.revision,
    state: row.state,
    overview: row.overview,
    pros: row.pros,
    cons: row.cons,
    authorship: authorshipToProto(authorFromColumns(row)),
    review:
      row.reviewedBy && row.reviewedAt
        ? approvalToProto({
            approver: row.reviewedBy,
            at: new Date(row.reviewedAt),
            approved: row.approved === true,
            note: row.reviewNote,
          })
        : undefined,
    flag: row.flag,
    createdAt: at(row.createdAt),
    publishedAt: at(row.publishedAt),
  });
}

/** A correction as answered (to editors, and to its submitter once, on submit). */
export function correctionToProto(row: CorrectionRow): Correction {
  return create(CorrectionSchema, { ...row, createdAt: at(row.createdAt), triagedAt: at(row.triagedAt) });
}

/** A queue item as answered. */
export function queueItemToProto(row: QueueItemRow): QueueItem {
  return create(QueueItemSchema, { ...row, createdAt: at(row.createdAt) });
}

/** A history entry as answered. */
export function historyToProto(row: HistoryRow): HistoryEntry {
  return create(HistoryEntrySchema, { ...row, at: at(row.at) });
}
