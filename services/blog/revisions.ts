import type { HandlerContext } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Review } from "../../gen/pf/blog/v1/common_pb.js";
import { type AiRuns, verifiedAuthor } from "../kit/auth/ai-runs.js";
import { type AiRule, authorColumns, authorOf, type AiClaim, type Author } from "../kit/auth/authorship.js";
import { newId } from "../kit/handler/ids.js";
import { problem } from "../kit/handler/problem.js";
import { checkRevision, ifMatchOf } from "../kit/handler/revisions.js";
import { refreshSearchDocuments } from "../kit/search-documents/record.js";
import { claimSlug } from "../kit/slugs/slugs.js";
import type { PostRow, RevisionRow } from "./db/entities.js";
import { appendRevision, insertReview, latestReviews, revisionOf, slugScope, updatePost } from "./db/posts.js";
import { postDocuments } from "./db/search.js";
import { postChanged } from "./events.js";

/**
 * Blog takes AI output of any workflow that names itself (1-128 visible characters, declared) and its run, once the
 * AI service vouched for the run (kit `verifiedAuthor`).
 */
export function postAuthorOf(ai: AiRuns, call: HandlerContext, claim: AiClaim): Promise<Author> {
  const rule: AiRule = {
    workflow: claim.workflow || "(the workflow's id)",
    code: "post.workflow_required",
    fields: {
      workflow: "authorship.workflow.id",
      runId: "authorship.workflow.run_id",
      stubProvider: "authorship.workflow.stub_provider",
    },
  };
  return verifiedAuthor(ai, authorOf(call, claim, rule), rule);
}

/** The revision a write expects, from the body or If-Match: required (428 revision.required). */
export function expectedRevisionOf(call: HandlerContext, fromBody: bigint | undefined) {
  const fromHeader = ifMatchOf(call);
  if (fromBody === undefined && fromHeader === undefined)
    throw problem(428, "revision.required", "Send expected_revision (or If-Match): the revision you read.");
  return { fromBody, fromHeader };
}

/** Whether the newest review of revision n approves it. */
export async function approved(em: EntityManager, postId: string, n: number): Promise<boolean> {
  return (await latestReviews(em, postId, [n])).get(n)?.verdict === "approve";
}

/**
 * Records a person's review of one revision of the post (the reviewer was checked as one who may edit it; its verdict
 * and note are declared).
 */
export async function recordReview(em: EntityManager, post: PostRow, review: Review, reviewer: string, at: Date) {
  const n = review.revision || post.currentRevision;
  if (!(await revisionOf(em, post.id, n))) throw problem(404, "revision.not_found", `The post has no revision ${n}.`);
  await insertReview(em, {
    id: newId("rvw", at.getTime()),
    postId: post.id,
    revision: n,
    reviewer,
    verdict: review.verdict,
    note: review.note,
    at,
  });
}

/** What a write changes: the revision's content (absent fields kept) and the post's settings. */
export interface Revise {
  content?: Partial<Pick<RevisionRow, "title" | "summary" | "body">>;
  basedOn?: number;
  slug?: string;
  settings?: Partial<Pick<PostRow, "visibility" | "taxonomy" | "series" | "listed" | "attachments">>;
}

/**
 * Saves a new immutable revision of a locked post after the optimistic check
 * (412 revision.conflict when someone saved first): the content changed over
 * the current revision's. An AI author makes it need review; so does a
 * person's edit on top of an unreviewed AI revision (AI-assisted).
 */
export async function saveRevision(
  em: EntityManager,
  post: PostRow,
  author: Author,
  expected: ReturnType<typeof expectedRevisionOf>,
  change: Revise,
  at: Date,
): Promise<void> {
  checkRevision(BigInt(post.currentRevision), expected.fromBody, expected.fromHeader);
  const current = (await revisionOf(em, post.id, post.currentRevision))!;
  const base = change.basedOn === undefined ? current : await revisionOf(em, post.id, change.basedOn);
  if (!base) throw problem(404, "revision.not_found", `The post has no revision ${String(change.basedOn)}.`);
  const baseApproved = await approved(em, post.id, base.n);
  const n = await appendRevision(em, {
    postId: post.id,
    title: change.content?.title ?? base.title,
    summary: change.content?.summary ?? base.summary,
    body: change.content?.body ?? base.body,
    ...authorColumns(author),
    reviewRequired: author.kind === "ai" || (base.reviewRequired && !baseApproved),
    basedOn: change.basedOn ?? null,
    createdAt: at,
  } as Omit<RevisionRow, "n">);
  const oldSlug = post.slug;
  const slug =
    change.slug === undefined ? oldSlug : await claimSlug(em, slugScope(post.blogId), post.id, change.slug, { at });
  await updatePost(em, post, {
    ...change.settings,
    slug,
    currentRevision: n,
    version: BigInt(post.version) + 1n,
    updatedAt: at,
  });
  const actor = author.kind === "person" ? author.person : author.service;
  await postChanged(em, post, "revised", actor, at);
  if (slug !== oldSlug) await postChanged(em, post, "slug_changed", actor, at);
  if (post.state === "published") await refreshSearchDocuments(em, postDocuments, [post.id], at);
}
