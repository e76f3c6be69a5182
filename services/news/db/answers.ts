import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  type ClusterAudit,
  ClusterAuditSchema,
  ClusterSchema,
  MembershipSchema,
  type SourceItem,
  SourceItemSchema,
} from "../../../gen/pf/news/v1/clusters_pb.js";
import {
  type AiDraft,
  AiDraftSchema,
  type Cited as CitedMessage,
  CitedSchema,
  type Flag,
  FlagSchema,
  type Note,
  NoteSchema,
  type Perspective,
  PerspectiveSchema,
  type Revision,
  RevisionSchema,
  type SourceEntry,
  SourceEntrySchema,
  type TimelineEntry,
  TimelineEntrySchema,
} from "../../../gen/pf/news/v1/story_pb.js";
import { approvalToProto, authorFromColumns, authorshipToProto } from "../../kit/auth/authorship.js";
import type { Cited } from "../domain/text.js";
import type { AuditRecord, ClusterRecord, MemberRecord } from "./clusters.js";
import type { ItemRecord } from "./items.js";
import type { AiDraftRecord, FlagRecord, NoteRecord, RevisionRecord } from "./revisions.js";
import type { PerspectiveRecord, SourceRecord, TimelineRecord } from "./stories.js";

const at = (value: Date | string | null | undefined) => (value ? timestampFromDate(new Date(value)) : undefined);

/** A source item as the shared message. */
export function itemToProto(row: ItemRecord): SourceItem {
  return create(SourceItemSchema, {
    id: row.id,
    sourceKey: row.source_key,
    canonicalUrl: row.canonical_url,
    title: row.title,
    publishedAt: at(row.published_at),
    revision: row.revision,
    dedupe: row.dedupe,
    duplicateOf: row.duplicate_of ?? "",
    removed: row.removed_at !== null,
    removedReason: row.removed_reason ?? "",
    removedAt: at(row.removed_at),
    clusterId: row.cluster_id ?? "",
    receivedAt: at(row.received_at),
  });
}

/** A cluster with its members (and, when given, history). */
export function clusterToProto(
  row: ClusterRecord,
  members: MemberRecord[],
  items: Map<string, ItemRecord>,
  history: AuditRecord[] = [],
): Cluster {
  return create(ClusterSchema, {
    id: row.id,
    state: row.state,
    mergedInto: row.merged_into ?? "",
    members: members.map((member) =>
      create(MembershipSchema, {
        item: items.has(member.item_id) ? itemToProto(items.get(member.item_id)!) : undefined,
        explanation: {
          method: member.method,
          evidence: member.evidence,
          score: member.score,
          by: member.by ?? "",
          at: at(member.at),
        },
      }),
    ),
    history: history.map(auditToProto),
    createdAt: at(row.created_at),
    updatedAt: at(row.updated_at),
  });
}

/** An audit entry: exactly which items moved. */
export function auditToProto(row: AuditRecord): ClusterAudit {
  return create(ClusterAuditSchema, {
    id: row.id,
    action: row.action,
    clusterId: row.cluster_id,
    moves: row.moves.map((move) => ({ itemId: move.item, fromClusterId: move.from, toClusterId: move.to })),
    reason: row.reason,
    by: row.by,
    at: at(row.at),
    reverses: row.reverses ?? "",
    reversedBy: row.reversed_by ?? "",
  });
}

/** Cited Markdown (its HTML is rendered by the kit once the answer is made: `markdown_of`). */
export function citedToProto(cited: Cited): CitedMessage {
  return create(CitedSchema, { text: cited.text, citations: cited.citations });
}

/** A source table entry. */
export function sourceToProto(row: SourceRecord): SourceEntry {
  return create(SourceEntrySchema, {
    number: row.number,
    itemId: row.item_id,
    title: row.title,
    canonicalUrl: row.canonical_url,
    sourceKey: row.source_key,
    removedUpstream: row.removed_upstream,
    detached: row.detached_at !== null,
    perspectiveId: row.perspective_id ?? "",
    attachedBy: row.attached_by ?? "",
    attachedAt: at(row.attached_at),
    detachedAt: at(row.detached_at),
  });
}

/** A timeline entry. */
export function timelineToProto(row: TimelineRecord): TimelineEntry {
  return create(TimelineEntrySchema, {
    id: row.id,
    date: row.stated_date,
    text: row.text,
    sourceNumber: row.source_number,
    createdBy: row.created_by,
    createdAt: at(row.created_at),
  });
}

/** Perspective groupings with their member numbers, taken from the source table given. */
export function perspectivesToProto(rows: PerspectiveRecord[], sources: SourceRecord[]): Perspective[] {
  return rows.map((row) =>
    create(PerspectiveSchema, {
      id: row.id,
      label: row.label,
      sourceNumbers: sources.filter((s) => s.perspective_id === row.id && !s.detached_at).map((s) => s.number),
      createdBy: row.created_by,
      createdAt: at(row.created_at),
    }),
  );
}

/** A revision exactly as saved: its snapshot, never the story's current tables. */
export function revisionToProto(row: RevisionRecord): Revision {
  const { sources, timeline, perspectives } = row.snapshot;
  return create(RevisionSchema, {
    storyId: row.story_id,
    n: row.n,
    headline: citedToProto(row.headline),
    paragraphs: row.paragraphs.map(citedToProto),
    authorship: authorshipToProto(
      authorFromColumns({
        authorKind: row.author_kind,
        author: row.author,
        workflow: row.workflow,
        runId: row.run_id,
        stubProvider: row.stub_provider,
        requestedBy: row.requested_by,
      }),
    ),
    aiAssisted: row.ai_assisted,
    basedOn: row.based_on,
    approval: row.approver
      ? approvalToProto({
          approver: row.approver,
          at: new Date(row.approved_at!),
          approved: true,
          note: row.approval_note ?? "",
        })
      : undefined,
    answersFlags: row.answers_flags,
    sources: sources.map(sourceToProto),
    timeline: timeline.map(timelineToProto),
    perspectives: perspectivesToProto(perspectives, sources),
    createdAt: at(row.created_at),
    aiDraftId: row.ai_draft_id ?? "",
  });
}

/** A flag. */
export function flagToProto(row: FlagRecord): Flag {
  return create(FlagSchema, {
    id: row.id,
    kind: row.kind,
    itemId: row.item_id ?? "",
    sourceNumber: row.source_number ?? 0,
    note: row.note,
    blocking: row.blocking,
    createdBy: row.created_by ?? "",
    createdAt: at(row.created_at),
    resolvedByRevision: row.resolved_revision ?? 0,
    resolvedAt: at(row.resolved_at),
  });
}

/** A note. */
export function noteToProto(row: NoteRecord): Note {
  return create(NoteSchema, {
    id: row.id,
    kind: row.kind,
    text: row.text,
    revision: row.revision,
    createdAt: at(row.created_at),
    publishedAt: at(row.published_at),
  });
}

/** An AI draft request with its numbered source input. */
export function aiDraftToProto(row: AiDraftRecord, sources: SourceRecord[]): AiDraft {
  return create(AiDraftSchema, {
    id: row.id,
    storyId: row.story_id,
    baseRevision: row.base_revision,
    instructions: row.instructions,
    requestedBy: row.requested_by,
    state: row.state,
    revision: row.revision ?? 0,
    sources: sources.map(sourceToProto),
    createdAt: at(row.created_at),
  });
}
