import type { EntityManager } from "@mikro-orm/postgresql";
import { type Author, authorColumns } from "../../kit/auth/authorship.js";
import { type EntityRow, type PointColumn, SummaryRevisionRow } from "./entities.js";

/** The states a reader who is not an editor may see: those a person approved. */
export const APPROVED_STATES = ["approved", "published", "unpublished"];

/**
 * Stores the next summary revision of an entity: numbered 1, 2, … under the
 * entity's row lock (the caller locked it), content never changed afterwards.
 */
export async function insertRevision(
  em: EntityManager,
  entity: EntityRow,
  input: {
    overview: string;
    pros: PointColumn[];
    cons: PointColumn[];
    author: Author;
    state: "proposed" | "approved";
    approver?: string;
    at: Date;
  },
): Promise<SummaryRevisionRow> {
  entity.summaryRevisions += 1;
  const row = em.create(SummaryRevisionRow, {
    entityId: entity.id,
    revision: entity.summaryRevisions,
    state: input.state,
    overview: input.overview,
    pros: input.pros,
    cons: input.cons,
    ...authorColumns(input.author),
    reviewedBy: input.approver ?? null,
    reviewedAt: input.approver ? input.at : null,
    approved: input.approver ? true : null,
    reviewNote: "",
    flag: "",
    createdAt: input.at,
    publishedAt: null,
  });
  await em.flush();
  return row;
}

/** An entity's revisions, newest first; only those in `states` when given. */
export function revisionsOf(em: EntityManager, entityId: string, states?: string[]): Promise<SummaryRevisionRow[]> {
  return em.find(
    SummaryRevisionRow,
    { entityId, ...(states ? { state: { $in: states } } : {}) },
    { orderBy: { revision: "desc" } },
  );
}

/** One revision, or null. */
export function revisionOf(em: EntityManager, entityId: string, revision: number): Promise<SummaryRevisionRow | null> {
  return em.findOne(SummaryRevisionRow, { entityId, revision });
}

/** The published revision, or null. */
export function publishedOf(em: EntityManager, entityId: string): Promise<SummaryRevisionRow | null> {
  return em.findOne(SummaryRevisionRow, { entityId, state: "published" });
}

/** The revisions of these entities whose pros or cons cite any of the signals (a split's flags). */
export async function revisionsCiting(
  em: EntityManager,
  entityIds: string[],
  signalIds: Set<string>,
): Promise<SummaryRevisionRow[]> {
  if (entityIds.length === 0 || signalIds.size === 0) return [];
  const rows = await em.find(
    SummaryRevisionRow,
    { entityId: { $in: entityIds }, state: { $ne: "rejected" } },
    { orderBy: { entityId: "asc", revision: "asc" } },
  );
  return rows.filter((row) =>
    [...row.pros, ...row.cons].some((point) => point.citations.some((id) => signalIds.has(id))),
  );
}

/** A person's review of a proposal: approved or rejected, with the reviewer, the time and the note. */
export async function reviewRevision(
  em: EntityManager,
  row: SummaryRevisionRow,
  review: { approved: boolean; by: string; at: Date; note: string },
): Promise<void> {
  row.state = review.approved ? "approved" : "rejected";
  row.approved = review.approved;
  row.reviewedBy = review.by;
  row.reviewedAt = review.at;
  row.reviewNote = review.note;
  await em.flush();
}

/** Publishes a revision; answers the one it displaced, unpublished now, or null (one published per entity). */
export async function publishRevision(
  em: EntityManager,
  row: SummaryRevisionRow,
  at: Date,
): Promise<SummaryRevisionRow | null> {
  const current = await publishedOf(em, row.entityId);
  if (current) current.state = "unpublished";
  row.state = "published";
  row.publishedAt = at;
  await em.flush();
  return current;
}

/** Unpublishes the published revision. */
export async function unpublishRevision(em: EntityManager, row: SummaryRevisionRow): Promise<void> {
  row.state = "unpublished";
  await em.flush();
}

/** Flags revisions (a split took signals they cite); their contents stay as written. */
export async function flagRevisions(em: EntityManager, rows: SummaryRevisionRow[], flag: string): Promise<void> {
  for (const row of rows) row.flag = flag;
  await em.flush();
}
