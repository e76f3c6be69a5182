import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { CorrectionRow } from "./entities.js";

/** Adds a correction to the queue, open. */
export async function insertCorrection(
  em: EntityManager,
  input: {
    entityId: string;
    targetKind: string;
    targetId: string;
    text: string;
    evidenceUrl: string;
    by: string;
    at: Date;
  },
): Promise<CorrectionRow> {
  const row = em.create(CorrectionRow, {
    id: newId("cor"),
    entityId: input.entityId,
    targetKind: input.targetKind,
    targetId: input.targetId,
    text: input.text,
    evidenceUrl: input.evidenceUrl,
    submittedBy: input.by,
    state: "open",
    editorNote: "",
    triagedBy: "",
    createdAt: input.at,
    triagedAt: null,
  });
  await em.flush();
  return row;
}

/** A page of the queue, oldest first; only one state when given. */
export function correctionsPage(
  em: EntityManager,
  state: string,
  limit: number,
  after?: string,
): Promise<CorrectionRow[]> {
  return em.find(
    CorrectionRow,
    { ...(state ? { state } : {}), ...(after ? { id: { $gt: after } } : {}) },
    { orderBy: { id: "asc" }, limit: limit + 1 },
  );
}

/** One correction, or null. */
export function correctionById(em: EntityManager, id: string): Promise<CorrectionRow | null> {
  return em.findOne(CorrectionRow, { id });
}

/** An editor's triage of a correction: its state, note, editor and time. */
export async function triageCorrection(
  em: EntityManager,
  row: CorrectionRow,
  triage: { state: string; note: string; by: string; at: Date },
): Promise<void> {
  row.state = triage.state;
  row.editorNote = triage.note;
  row.triagedBy = triage.by;
  row.triagedAt = triage.at;
  await em.flush();
}
