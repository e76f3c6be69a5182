import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  BlogSchema,
  MemberSchema,
  PostSchema,
  RevisionSchema,
  ScheduleSchema,
  type Blog,
  type Member,
  type Post,
  type Revision,
  type Schedule,
} from "../../gen/pf/blog/v1/common_pb.js";
import { approvalToProto, authorFromColumns, authorshipToProto, type AuthorColumns } from "../kit/auth/authorship.js";
import type { ReadContext } from "../kit/db/reads.js";
import type { BlogRow, MemberRow, PostRow, ReviewRow, RevisionRow, ScheduleRow } from "./db/entities.js";
import { readPendingSchedules, readReviewedRevisions } from "./db/post-reads.js";
import { latestReviews, pendingSchedules, revisionsOf } from "./db/posts.js";
import { shownState, type PostState } from "./domain/posts.js";

export function blogToProto(row: BlogRow, official: boolean): Blog {
  return create(BlogSchema, {
    id: row.id,
    handle: row.handle,
    createdFor: row.createdFor,
    title: row.title,
    description: row.description,
    language: row.language,
    theme: row.theme,
    feed: {
      rss: row.feedRss,
      atom: row.feedAtom,
      jsonFeed: row.feedJson,
      itemCount: row.feedItems,
      fullText: row.feedFullText,
    },
    official,
    revision: BigInt(row.revision),
    createdAt: timestampFromDate(new Date(row.createdAt)),
    updatedAt: timestampFromDate(new Date(row.updatedAt)),
  });
}

export function memberToProto(row: MemberRow): Member {
  return create(MemberSchema, {
    subject: row.subject,
    role: row.role,
    addedAt: timestampFromDate(new Date(row.addedAt)),
  });
}

/** The author of a post or revision as the shared message: AI output never names the person who asked. */
export function authorshipOf(row: AuthorColumns) {
  return authorshipToProto(authorFromColumns(row));
}

/** A revision; in a listing without its body (rows read without it), which the kit renders as body_html otherwise. */
export function revisionToProto(row: RevisionRow, review: ReviewRow | undefined, listing = false): Revision {
  return create(RevisionSchema, {
    n: row.n,
    title: row.title,
    summary: row.summary,
    body: listing ? "" : row.body,
    authorship: authorshipOf(row),
    reviewRequired: row.reviewRequired,
    approval:
      review &&
      approvalToProto({
        approver: review.reviewer,
        at: new Date(review.at),
        approved: review.verdict === "approve",
        note: review.note,
      }),
    basedOn: row.basedOn ?? 0,
    createdAt: timestampFromDate(new Date(row.createdAt)),
  });
}

export function scheduleToProto(row: ScheduleRow): Schedule {
  return create(ScheduleSchema, {
    id: row.id,
    postId: row.postId,
    action: row.action,
    at: timestampFromDate(new Date(row.at)),
    revision: row.revision,
    state: row.state,
    failure: row.failure,
    createdAt: timestampFromDate(new Date(row.createdAt)),
  });
}

/** The revisions a post's message holds: the one its reader sees (members the current), and the published one. */
function shownOf(post: PostRow, member: boolean): { shown: number; ns: number[] } {
  const shown = member ? post.currentRevision : (post.publishedRevision ?? post.currentRevision);
  return { shown, ns: [...new Set([shown, post.publishedRevision ?? shown])] };
}

/**
 * A post as a reader sees it: members the current revision and the pending
 * schedules; everyone else the published revision only. In a listing the
 * revision comes without its body (a page of 200,000-character bodies is
 * never held): the post's read has it.
 */
export async function postView(
  em: EntityManager,
  post: PostRow,
  handle: string,
  options: { member: boolean; listing?: boolean },
): Promise<Post> {
  const { ns } = shownOf(post, options.member);
  const [revisions, reviews, schedules] = await Promise.all([
    revisionsOf(em, post.id, ns, !options.listing),
    latestReviews(em, post.id, ns),
    options.member ? pendingSchedules(em, [post.id]) : Promise.resolve([]),
  ]);
  return postMessage(post, handle, { revisions, reviews: [...reviews.values()], schedules }, options);
}

/**
 * `postView` of a page of posts (or one) outside any transaction, for the public reads: two statements whatever
 * the number of posts (their revisions with the reviews that count, and for members the pending schedules).
 */
export async function readPostViews(
  ctx: ReadContext,
  posts: PostRow[],
  handle: string,
  options: { member: boolean; listing?: boolean },
): Promise<Post[]> {
  const keys = posts.flatMap((post) => shownOf(post, options.member).ns.map((n) => ({ postId: post.id, n })));
  const [{ revisions, reviews }, schedules] = await Promise.all([
    readReviewedRevisions(ctx, keys, !options.listing),
    options.member && posts.length > 0
      ? readPendingSchedules(
          ctx,
          posts.map((post) => post.id),
        )
      : Promise.resolve([]),
  ]);
  const of = <T extends { postId: string }>(rows: T[], post: PostRow) => rows.filter((row) => row.postId === post.id);
  return posts.map((post) =>
    postMessage(
      post,
      handle,
      { revisions: of(revisions, post), reviews: of(reviews, post), schedules: of(schedules, post) },
      options,
    ),
  );
}

/**
 * A post's message from its rows, read as `postView` reads them: its revisions shown, the reviews that count for
 * them, its pending schedules.
 */
export function postMessage(
  post: PostRow,
  handle: string,
  rows: { revisions: RevisionRow[]; reviews: ReviewRow[]; schedules: ScheduleRow[] },
  options: { member: boolean; listing?: boolean },
): Post {
  const { shown } = shownOf(post, options.member);
  const byN = new Map(rows.revisions.map((row) => [row.n, row]));
  const reviews = new Map(rows.reviews.map((row) => [row.revision, row]));
  const revision = byN.get(shown);
  const published = byN.get(post.publishedRevision ?? -1);
  const { schedules } = rows;
  return create(PostSchema, {
    id: post.id,
    blogId: post.blogId,
    handle,
    slug: post.slug,
    state: shownState(
      post.state as PostState,
      schedules.some((row) => row.action === "publish"),
    ),
    visibility: post.visibility,
    taxonomy: post.taxonomy,
    series: post.series,
    attachments: post.attachments,
    listed: post.listed,
    // Noindex while the revision readers see (or, unpublished, the current one) is AI-generated or AI-assisted.
    noindex: (published ?? revision)?.reviewRequired ?? false,
    currentRevision: post.currentRevision,
    publishedRevision: post.publishedRevision ?? 0,
    authorship: authorshipOf(post),
    revision: revision && revisionToProto(revision, reviews.get(revision.n), options.listing),
    schedules: schedules.map(scheduleToProto),
    publishedAt: post.publishedAt ? timestampFromDate(new Date(post.publishedAt)) : undefined,
    createdAt: timestampFromDate(new Date(post.createdAt)),
    updatedAt: timestampFromDate(new Date(post.updatedAt)),
  });
}
