import type { EntityManager } from "@mikro-orm/postgresql";
import { problem } from "../kit/handler/problem.js";
import { refreshSearchDocuments } from "../kit/search-documents/record.js";
import type { PostRow } from "./db/entities.js";
import { cancelSchedules, revisionOf, updatePost } from "./db/posts.js";
import { postDocuments } from "./db/search.js";
import { requirePublishable } from "./domain/posts.js";
import { postChanged } from "./events.js";
import { approved } from "./revisions.js";

/**
 * Publishes revision n of a locked post through the gate (409
 * post.review_required for an AI-generated or AI-assisted revision without an
 * approving review); the publication pins the revision, so later revisions go
 * live only when published. Publishing the published revision again changes
 * nothing (answers false). A pending scheduled publish ends: this publish
 * replaces it. The same path for POST /publish and the scheduler.
 */
export async function publishNow(
  em: EntityManager,
  post: PostRow,
  n: number,
  actor: string,
  at: Date,
): Promise<boolean> {
  const revision = await revisionOf(em, post.id, n);
  if (!revision) throw problem(404, "revision.not_found", `The post has no revision ${n}.`);
  requirePublishable(revision, await approved(em, post.id, n));
  if (post.state === "published" && post.publishedRevision === n) return false;
  await updatePost(em, post, {
    state: "published",
    publishedRevision: n,
    publishedAt: post.publishedAt ?? at,
    version: BigInt(post.version) + 1n,
    updatedAt: at,
  });
  await cancelSchedules(em, post.id, at, "publish");
  await postChanged(em, post, "published", actor, at);
  await refreshSearchDocuments(em, postDocuments, [post.id], at);
  return true;
}

/** Unpublishes a locked post: readers get 404, search a tombstone, feeds drop it. False when it was not published. */
export async function unpublishNow(em: EntityManager, post: PostRow, actor: string, at: Date): Promise<boolean> {
  if (post.state !== "published") return false;
  await updatePost(em, post, { state: "unpublished", version: BigInt(post.version) + 1n, updatedAt: at });
  await postChanged(em, post, "unpublished", actor, at);
  await refreshSearchDocuments(em, postDocuments, [post.id], at);
  return true;
}
