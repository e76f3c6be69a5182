import { invalid, problem } from "../../kit/handler/problem.js";
import { idPattern } from "../../kit/handler/ids.js";
import type { Role } from "./blogs.js";

export const VISIBILITIES = ["public", "members-only", "private"] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export type PostState = "draft" | "published" | "unpublished" | "deleted";

export const TITLE_MAX = 200;
export const SUMMARY_MAX = 500;
/** A body of at most 200,000 characters (a 5 MB body is refused by the gateway's body cap first: 413). */
export const BODY_MAX = 200_000;
const TERMS_MAX = 20;
const TERM_MAX = 50;
const SERIES_MAX = 100;
const ATTACHMENTS_MAX = 20;
const MEDIA_ID = idPattern("med");

export function requireVisibility(value: string): Visibility {
  if (!(VISIBILITIES as readonly string[]).includes(value))
    throw invalid("visibility", `visibility is one of ${VISIBILITIES.join(", ")}.`);
  return value as Visibility;
}

/** Taxonomy terms: trimmed, unique, each 1-50 characters, at most 20. */
export function requireTerms(field: string, terms: readonly string[]): string[] {
  if (terms.length > TERMS_MAX) throw invalid(field, `${field} holds at most ${TERMS_MAX} terms.`);
  const out: string[] = [];
  for (const raw of terms) {
    const term = raw.trim();
    if (term === "" || term.length > TERM_MAX) throw invalid(field, `each term is 1-${TERM_MAX} characters.`);
    if (!out.includes(term)) out.push(term);
  }
  return out;
}

export function requireSeries(value: string): string {
  const series = value.trim();
  if (series.length > SERIES_MAX) throw invalid("series", `series holds at most ${SERIES_MAX} characters.`);
  return series;
}

/** A media object id (med_), the attachment's only form. */
export function requireMediaId(field: string, value: string): string {
  if (!MEDIA_ID.test(value)) throw invalid(field, `${field} is a media object id (med_…).`);
  return value;
}

export function requireAttachments(ids: readonly string[]): string[] {
  if (ids.length > ATTACHMENTS_MAX) throw invalid("attachments", `at most ${ATTACHMENTS_MAX} attachments.`);
  return [...new Set(ids.map((id) => requireMediaId("attachments", id)))];
}

/** Who may edit (and publish, schedule, unpublish) a post: editors and owners every post, authors their own. */
export function mayEdit(role: Role | undefined, person: string | undefined, postPerson: string | undefined): boolean {
  if (role === "owner" || role === "editor") return true;
  return role === "author" && person !== undefined && person === postPerson;
}

/** The state readers are told: a published or draft post with a pending publish reads "scheduled". */
export function shownState(state: PostState, pendingPublish: boolean): string {
  return pendingPublish && state !== "published" && state !== "deleted" ? "scheduled" : state;
}

/** The publish gate: an AI-generated (or AI-assisted) revision needs a recorded approving review. */
export function requirePublishable(revision: { n: number; reviewRequired: boolean }, approved: boolean): void {
  if (revision.reviewRequired && !approved)
    throw problem(
      409,
      "post.review_required",
      `Revision ${revision.n} is AI-generated or AI-assisted: a person must record an approving review first.`,
      { revision: revision.n },
    );
}

/** Writes on a deleted post. */
export function refuseDeleted(state: PostState): void {
  if (state === "deleted") throw problem(409, "post.deleted", "The post is deleted.");
}
