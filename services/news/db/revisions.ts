import type { EntityManager } from "@mikro-orm/postgresql";
import { type Author, authorColumns } from "../../kit/auth/authorship.js";
import { newId } from "../../kit/handler/ids.js";
import { nextRevisionNumber } from "../../kit/revisions/immutable.js";
import type { Cited } from "../domain/text.js";
import { sql } from "../../kit/db/sql.js";
import type { PerspectiveRecord, SourceRecord, TimelineRecord } from "./stories.js";

/** What a revision freezes: the source table, timeline and perspectives as they were when saved. */
export interface Snapshot {
  sources: SourceRecord[];
  timeline: TimelineRecord[];
  perspectives: PerspectiveRecord[];
}

/** A revision as stored, with its approval. */
export interface RevisionRecord {
  story_id: string;
  n: number;
  headline: Cited;
  paragraphs: Cited[];
  author_kind: "person" | "ai" | "system";
  author: string;
  workflow: string | null;
  run_id: string | null;
  stub_provider: boolean;
  requested_by: string | null;
  ai_assisted: boolean;
  based_on: number;
  answers_flags: string[];
  snapshot: Snapshot;
  ai_draft_id: string | null;
  created_at: Date;
  approver: string | null;
  approval_note: string | null;
  approved_at: Date | null;
}

const TABLES = { parent: "stories", revisions: "story_revisions", parentColumn: "story_id" };

/** Saves the story's next revision (numbered under the story row's lock); answers its number. */
export async function insertRevision(
  em: EntityManager,
  revision: {
    story: string;
    headline: Cited;
    paragraphs: Cited[];
    author: Author;
    aiAssisted: boolean;
    basedOn: number;
    answersFlags: string[];
    snapshot: Snapshot;
    aiDraftId: string | null;
    at: Date;
  },
): Promise<number> {
  const n = (await nextRevisionNumber(em, TABLES, revision.story))!;
  const author = authorColumns(revision.author);
  await sql(
    em,
    `insert into {story_revisions} (story_id, n, headline, paragraphs, author_kind, author, workflow, run_id,
       stub_provider, requested_by, ai_assisted, based_on, answers_flags, snapshot, ai_draft_id, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      revision.story,
      n,
      JSON.stringify(revision.headline),
      JSON.stringify(revision.paragraphs),
      author.authorKind,
      author.author,
      author.workflow ?? null,
      author.runId ?? null,
      author.stubProvider,
      author.requestedBy ?? null,
      revision.aiAssisted,
      revision.basedOn,
      JSON.stringify(revision.answersFlags),
      JSON.stringify(revision.snapshot),
      revision.aiDraftId,
      revision.at,
    ],
  );
  return n;
}

const REVISION = `select r.*, a.approver, a.note as approval_note, a.at as approved_at from {story_revisions} r
  left join {story_approvals} a on a.story_id = r.story_id and a.n = r.n`;

/** Revision n of a story; undefined when missing. */
export async function revisionOf(em: EntityManager, story: string, n: number): Promise<RevisionRecord | undefined> {
  const [row] = await sql<RevisionRecord>(em, `${REVISION} where r.story_id = ? and r.n = ?`, [story, n]);
  return row;
}

/** A story's revisions, newest first. */
export function revisionsOf(em: EntityManager, story: string): Promise<RevisionRecord[]> {
  return sql<RevisionRecord>(em, `${REVISION} where r.story_id = ? order by r.n desc`, [story]);
}

/** Records a person's approval of a revision; answers false when it already had one. */
export async function insertApproval(
  em: EntityManager,
  approval: { story: string; n: number; approver: string; note: string; at: Date },
): Promise<boolean> {
  const rows = await sql<{ n: number }>(
    em,
    `insert into {story_approvals} (story_id, n, approver, note, at) values (?, ?, ?, ?, ?)
     on conflict do nothing returning n`,
    [approval.story, approval.n, approval.approver, approval.note, approval.at],
  );
  return rows.length > 0;
}

/** A flag as stored. */
export interface FlagRecord {
  id: string;
  story_id: string;
  kind: string;
  item_id: string | null;
  source_number: number | null;
  note: string;
  blocking: boolean;
  created_by: string | null;
  created_at: Date;
  resolved_revision: number | null;
  resolved_at: Date | null;
}

/** Raises a flag; answers its id. */
export async function insertFlag(
  em: EntityManager,
  flag: { story: string; kind: string; item?: string; number?: number; note: string; blocking: boolean; by?: string },
  at: Date,
): Promise<string> {
  const id = newId("flg");
  await sql(
    em,
    `insert into {story_flags} (id, story_id, kind, item_id, source_number, note, blocking, created_by, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, flag.story, flag.kind, flag.item ?? null, flag.number ?? null, flag.note, flag.blocking, flag.by ?? null, at],
  );
  return id;
}

/** A story's flags, oldest first. */
export function flagsOf(em: EntityManager, story: string): Promise<FlagRecord[]> {
  return sql<FlagRecord>(em, `select * from {story_flags} where story_id = ? order by id`, [story]);
}

/** Resolves the open flags a published revision answers. */
export async function resolveFlags(em: EntityManager, story: string, ids: string[], n: number, at: Date) {
  if (ids.length === 0) return;
  await sql(
    em,
    `update {story_flags} set resolved_revision = ?, resolved_at = ? where story_id = ? and id in (?)
     and resolved_revision is null`,
    [n, at, story, ids],
  );
}

/** A note as stored. */
export interface NoteRecord {
  id: string;
  story_id: string;
  revision: number;
  kind: "correction" | "update";
  text: string;
  created_by: string;
  created_at: Date;
  published_at: Date | null;
}

/** Adds a pending correction or update note. */
export async function insertNote(
  em: EntityManager,
  note: { story: string; revision: number; kind: string; text: string; by: string; at: Date },
) {
  await sql(
    em,
    `insert into {story_notes} (id, story_id, revision, kind, text, created_by, created_at) values (?, ?, ?, ?, ?, ?, ?)`,
    [newId("nte"), note.story, note.revision, note.kind, note.text, note.by, note.at],
  );
}

/** A story's notes, oldest first. */
export function notesOf(em: EntityManager, story: string): Promise<NoteRecord[]> {
  return sql<NoteRecord>(em, `select * from {story_notes} where story_id = ? order by id`, [story]);
}

/** Publishes the pending notes. */
export async function publishNotes(em: EntityManager, story: string, at: Date) {
  await sql(em, `update {story_notes} set published_at = ? where story_id = ? and published_at is null`, [at, story]);
}

/** An AI draft request as stored. */
export interface AiDraftRecord {
  id: string;
  story_id: string;
  base_revision: number;
  instructions: string;
  requested_by: string;
  state: "requested" | "fulfilled";
  revision: number | null;
  created_at: Date;
}

/** Records an AI draft request; answers it. */
export async function insertAiDraft(
  em: EntityManager,
  draft: { story: string; base: number; instructions: string; by: string; at: Date },
): Promise<AiDraftRecord> {
  const [row] = await sql<AiDraftRecord>(
    em,
    `insert into {ai_drafts} (id, story_id, base_revision, instructions, requested_by, state, created_at)
     values (?, ?, ?, ?, ?, 'requested', ?) returning *`,
    [newId("aid"), draft.story, draft.base, draft.instructions, draft.by, draft.at],
  );
  return row;
}

/** Marks a request fulfilled by revision n; answers false when it is not this story's open request. */
export async function fulfilAiDraft(em: EntityManager, story: string, id: string, n: number): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `update {ai_drafts} set state = 'fulfilled', revision = ? where id = ? and story_id = ? and state = 'requested'
     returning id`,
    [n, id, story],
  );
  return rows.length > 0;
}
