import { idPattern } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { Role } from "./blogs.js";

/*
 * The contract declares what needs no data (lengths, the visibilities, at most 20 terms and attachments): the input
 * guard refuses it before a handler runs. What stays here trims first, names the list for a bad item, or counts what
 * the post holds.
 */

export type PostState = "draft" | "published" | "unpublished" | "deleted";

const TERM_MAX = 50;
const SERIES_MAX = 100;
const ATTACHMENTS_MAX = 20;
const MEDIA_ID = idPattern("med");

/** Taxonomy terms (at most 20, declared): trimmed, unique, each 1-50 characters once trimmed. */
export function requireTerms(field: string, terms: readonly string[]): string[] {
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

/** Attachments as sent (at most 20, declared): each a media object id (med_), 400 naming the list; unique. */
export function requireAttachments(ids: readonly string[]): string[] {
  if (!ids.every((id) => MEDIA_ID.test(id)))
    throw invalid("attachments", "each attachment is a media object id (med_…).");
  return [...new Set(ids)];
}

/** The post's attachments with one more (its med_ id declared): at most 20 on a post. */
export function withAttachment(attachments: readonly string[], media: string): string[] {
  if (attachments.length >= ATTACHMENTS_MAX) throw invalid("attachments", `at most ${ATTACHMENTS_MAX} attachments.`);
  return [...new Set([...attachments, media])];
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
