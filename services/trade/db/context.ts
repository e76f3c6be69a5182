import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import {
  type ContextRevision,
  ContextRevisionSchema,
  type ContextSource,
  ContextSourceSchema,
  ContextStatus,
} from "../../../gen/pf/trade/v1/context_pb.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { sql } from "../../kit/db/sql.js";
import {
  type Author,
  approvalToProto,
  authorColumns,
  authorFromColumns,
  authorshipToProto,
} from "../../kit/auth/authorship.js";
import { newId } from "../../kit/handler/ids.js";
import { type Decision, disclosureOf } from "../domain/disclosure.js";
import { ContextRevisionRow } from "./context-entities.js";
import { citedSources, type InputSource } from "./context-input.js";

/** Where a revision is in review, as stored. */
export type RevisionStatus = "draft" | "approved" | "rejected" | "published" | "superseded";

/** How many unpublished revisions `all=1` shows. */
const PENDING_SHOWN = 50;

/** Stores a proposal as a draft, numbered next for its instrument (under the instrument's context lock). */
export async function insertDraft(
  em: EntityManager,
  draft: { instrumentId: string; text: string; citations: number[]; inputId: string; author: Author; at: Date },
): Promise<ContextRevisionRow> {
  await lockContext(em, draft.instrumentId);
  const [{ next }] = await sql<{ next: number }>(
    em,
    `select coalesce(max(revision), 0) + 1 as next from {context_revisions} where instrument_id = ?`,
    [draft.instrumentId],
  );
  const row = em.create(ContextRevisionRow, {
    id: newId("ctx"),
    instrumentId: draft.instrumentId,
    revision: Number(next),
    text: draft.text,
    citations: draft.citations,
    inputId: draft.inputId,
    status: "draft",
    ...authorColumns(draft.author),
    decisionNote: "",
    createdAt: draft.at,
  });
  await em.flush();
  return row;
}

/** A revision, locked for a decision (under the instrument's context lock), or null. */
export async function revisionForDecision(
  em: EntityManager,
  instrumentId: string,
  revision: number,
): Promise<ContextRevisionRow | null> {
  await lockContext(em, instrumentId);
  return em.findOne(ContextRevisionRow, { instrumentId, revision }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** Records an editor's decision on a draft. */
export async function decide(
  em: EntityManager,
  row: ContextRevisionRow,
  decision: { approver: string; at: Date; approved: boolean; note: string },
): Promise<void> {
  row.status = decision.approved ? "approved" : "rejected";
  row.decidedBy = decision.approver;
  row.decidedAt = decision.at;
  row.decisionNote = decision.note;
  await em.flush();
}

/** Publishes an approved revision, superseding the published one; answers the number superseded (0 when none). */
export async function publish(em: EntityManager, row: ContextRevisionRow, by: string, at: Date): Promise<number> {
  const previous = await em.findOne(ContextRevisionRow, { instrumentId: row.instrumentId, status: "published" });
  if (previous) {
    previous.status = "superseded";
    // The one-published index holds between statements: the old one leaves before the new one arrives.
    await em.flush();
  }
  row.status = "published";
  row.publishedBy = by;
  row.publishedAt = at;
  await em.flush();
  return previous?.revision ?? 0;
}

/** The instrument's published revision and its drafts and approved revisions, newest first (`all=1`). */
export async function contextRevisions(
  em: EntityManager,
  instrumentId: string,
): Promise<{ published: ContextRevisionRow | null; drafts: ContextRevisionRow[] }> {
  const published = await em.findOne(ContextRevisionRow, { instrumentId, status: "published" });
  const drafts = await em.find(
    ContextRevisionRow,
    { instrumentId, status: { $in: ["draft", "approved"] } },
    { orderBy: { revision: "desc" }, limit: PENDING_SHOWN },
  );
  return { published, drafts };
}

/** Revisions as the contract's messages: cited sources resolved against their inputs, disclosure generated. */
export async function revisionAnswers(em: EntityManager, rows: ContextRevisionRow[]): Promise<ContextRevision[]> {
  const sources = await citedSources(
    em,
    rows.map((row) => ({ inputId: row.inputId, numbers: row.citations })),
  );
  return rows.map((row) => revisionToProto(row, sources));
}

/** A revision as the contract's message, its citations taken from `sources` (`inputId:number` → source). */
export function revisionToProto(row: ContextRevisionRow, sources: ReadonlyMap<string, InputSource>): ContextRevision {
  const author = authorFromColumns(row);
  const decision = decisionOf(row);
  return create(ContextRevisionSchema, {
    id: row.id,
    revision: row.revision,
    text: row.text,
    citations: row.citations.flatMap((n) => {
      const source = sources.get(`${row.inputId}:${n}`);
      return source ? [sourceToProto(source)] : [];
    }),
    inputId: row.inputId,
    status: STATUS[row.status as RevisionStatus],
    authorship: authorshipToProto(author),
    approval: decision ? approvalToProto({ ...decision, note: row.decisionNote }) : undefined,
    disclosure: disclosureOf(author, decision),
    createdAt: timestampFromDate(row.createdAt),
    publishedAt: row.publishedAt ? timestampFromDate(row.publishedAt) : undefined,
  });
}

/** A numbered source as the contract's message. */
export function sourceToProto(source: InputSource): ContextSource {
  return create(ContextSourceSchema, {
    number: source.number,
    kind: source.kind,
    ref: source.ref,
    title: source.title,
    url: source.url,
    sourceKey: source.sourceKey,
    at: source.at ? timestampFromDate(source.at) : undefined,
    filingType: source.filingType,
    metric: source.metric,
    value: source.value,
    unit: source.unit,
    currency: source.currency,
  });
}

const STATUS: Record<RevisionStatus, ContextStatus> = {
  draft: ContextStatus.DRAFT,
  approved: ContextStatus.APPROVED,
  rejected: ContextStatus.REJECTED,
  published: ContextStatus.PUBLISHED,
  superseded: ContextStatus.SUPERSEDED,
};

function decisionOf(row: ContextRevisionRow): Decision | undefined {
  if (!row.decidedBy || !row.decidedAt) return undefined;
  return { approver: row.decidedBy, at: row.decidedAt, approved: row.status !== "rejected" };
}

/** One writer at a time per instrument's context: numbering and publishing never race. */
function lockContext(em: EntityManager, instrumentId: string): Promise<void> {
  return advisoryLock(em, `trade.context:${instrumentId}`);
}
