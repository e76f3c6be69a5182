import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { Role } from "../domain/blogs.js";
import type { BlogRow, PostRow, ReviewRow, RevisionRow, ScheduleRow } from "./entities.js";

// The public reads of blogs and posts (a post's read, a feed), outside any transaction: hot reads
// (services/kit/db/reads.ts). Rows come with timestamps and bigints as text, made into the entities' types here.

const date = (text: string) => new Date(text);
const dateOrNull = (text: string | null) => (text === null ? null : new Date(text));

const BLOG_COLUMNS = `b.id, b.handle, b.created_for as "createdFor", b.title, b.description, b.language, b.theme,
  b.feed_rss as "feedRss", b.feed_atom as "feedAtom", b.feed_json as "feedJson", b.feed_items as "feedItems",
  b.feed_full_text as "feedFullText", b.revision, b.created_at as "createdAt", b.updated_at as "updatedAt"`;
type BlogText = Omit<BlogRow, "revision" | "createdAt" | "updatedAt"> &
  Record<"revision" | "createdAt" | "updatedAt", string>;
const blogOf = (row: BlogText): BlogRow => ({
  ...row,
  revision: BigInt(row.revision),
  createdAt: date(row.createdAt),
  updatedAt: date(row.updatedAt),
});

const blogByHandle = new HotRead<BlogText, [string]>(
  "blogs.by_handle",
  `select ${BLOG_COLUMNS} from {blogs} b where b.handle = $1`,
);

/** The blog of a handle (as written: handles are stored lower case), or undefined. */
export async function readBlog(ctx: ReadContext, handle: string): Promise<BlogRow | undefined> {
  const [row] = await blogByHandle.run(ctx, handle);
  return row && blogOf(row);
}

const POST_COLUMNS = `p.id, p.blog_id as "blogId", p.author_kind as "authorKind", p.author, p.workflow,
  p.run_id as "runId", p.stub_provider as "stubProvider", p.requested_by as "requestedBy", p.slug, p.state,
  p.visibility, p.taxonomy, p.series, p.attachments, p.listed, p.current_revision as "currentRevision",
  p.published_revision as "publishedRevision", p.version, p.published_at as "publishedAt",
  p.deleted_at as "deletedAt", p.created_at as "createdAt", p.updated_at as "updatedAt"`;
type PostText = Omit<PostRow, "version" | "publishedAt" | "deletedAt" | "createdAt" | "updatedAt"> &
  Record<"version" | "createdAt" | "updatedAt", string> &
  Record<"publishedAt" | "deletedAt", string | null>;
const postOf = ({ version, publishedAt, deletedAt, createdAt, updatedAt, ...row }: PostText): PostRow => ({
  ...row,
  version: BigInt(version),
  publishedAt: dateOrNull(publishedAt),
  deletedAt: dateOrNull(deletedAt),
  createdAt: date(createdAt),
  updatedAt: date(updatedAt),
});

/** A blog's pages: every post not deleted by creation (members), or the public, published, listed ones by publication. */
const postPages = (name: string, where: string, order: string) => ({
  first: new HotRead<PostText, [string, number]>(
    `posts.${name}.first`,
    `select ${POST_COLUMNS} from {posts} p where p.blog_id = $1 and ${where} order by ${order} desc, p.id desc limit $2`,
  ),
  next: new HotRead<PostText, [string, number, string, string]>(
    `posts.${name}.next`,
    `select ${POST_COLUMNS} from {posts} p where p.blog_id = $1 and ${where}
      and (${order}, p.id) < ($3::timestamptz, $4::text) order by ${order} desc, p.id desc limit $2`,
  ),
});
const PAGES = {
  all: postPages("all", `p.state <> 'deleted'`, "p.created_at"),
  listed: postPages("listed", `p.state = 'published' and p.visibility = 'public' and p.listed`, "p.published_at"),
};

/**
 * `rows` of a blog's posts, newest first, after a cursor (its time and id): `all` every post not deleted, by
 * creation; else the public, published, listed ones (the listing, the feeds) by publication.
 */
export async function readPostPage(
  ctx: ReadContext,
  blogId: string,
  page: { all: boolean; rows: number; after?: { at: Date; id: string } },
): Promise<PostRow[]> {
  const { first, next } = page.all ? PAGES.all : PAGES.listed;
  const { after } = page;
  const rows = after
    ? await next.run(ctx, blogId, page.rows, after.at.toISOString(), after.id)
    : await first.run(ctx, blogId, page.rows);
  return rows.map(postOf);
}

const revisionColumns = (body: boolean) => `r.post_id as "postId", r.n, r.title, r.summary,
  ${body ? "r.body" : `'' as body`}, r.author_kind as "authorKind", r.author, r.workflow, r.run_id as "runId",
  r.stub_provider as "stubProvider", r.requested_by as "requestedBy", r.review_required as "reviewRequired",
  r.based_on as "basedOn", r.created_at as "createdAt"`;
type RevisionText = Omit<RevisionRow, "createdAt"> & { createdAt: string };
const revisionOf = ({ createdAt, ...row }: RevisionText): RevisionRow => ({ ...row, createdAt: date(createdAt) });

/** The review that counts for revision `r`, the newest (as db/posts.ts latestReviews), as JSON or null. */
const REVIEW = `(select json_build_object('id', v.id, 'reviewer', v.reviewer, 'verdict', v.verdict, 'note', v.note,
    'at', v.at) from {post_reviews} v where v.post_id = r.post_id and v.revision = r.n order by v.at desc, v.id desc
    limit 1)`;
type ReviewText = (Omit<ReviewRow, "postId" | "revision" | "at"> & { at: string }) | null;
type ReviewedText = RevisionText & { review: ReviewText };
const reviewedOf = (rows: ReviewedText[]): { revisions: RevisionRow[]; reviews: ReviewRow[] } => ({
  revisions: rows.map(({ review: _, ...row }) => revisionOf(row)),
  reviews: rows.flatMap(({ review, postId, n }) =>
    review ? [{ ...review, postId, revision: n, at: date(review.at) }] : [],
  ),
});

// Each revision ($1, $2: a set of (post, number) pairs) with the review that counts for it; with its body or, for
// a listing, without (never read).
const reviewed = (body: boolean) =>
  new HotRead<ReviewedText, [string[], number[]]>(
    `post_revisions.reviewed${body ? "" : ".listed"}`,
    `select ${revisionColumns(body)}, ${REVIEW} as review
      from {post_revisions} r where (r.post_id, r.n) in (select * from unnest($1::text[], $2::int[]))`,
  );
const reviewedWithBody = reviewed(true);
const reviewedListed = reviewed(false);

/** A revision of a post, by post and number. */
export interface RevisionKey {
  postId: string;
  n: number;
}

/**
 * The revisions named with the review that counts for each (the newest), in one statement whatever their number;
 * `body` false leaves their bodies unread ("").
 */
export async function readReviewedRevisions(
  ctx: ReadContext,
  keys: RevisionKey[],
  body: boolean,
): Promise<{ revisions: RevisionRow[]; reviews: ReviewRow[] }> {
  if (keys.length === 0) return { revisions: [], reviews: [] };
  const read = body ? reviewedWithBody : reviewedListed;
  const rows = await read.run(
    ctx,
    keys.map((key) => key.postId),
    keys.map((key) => key.n),
  );
  return reviewedOf(rows);
}

/** A revision of `r` as JSON, with the review that counts for it. */
const REVISION_JSON = `json_build_object('postId', r.post_id, 'n', r.n, 'title', r.title, 'summary', r.summary,
  'body', r.body, 'authorKind', r.author_kind, 'author', r.author, 'workflow', r.workflow, 'runId', r.run_id,
  'stubProvider', r.stub_provider, 'requestedBy', r.requested_by, 'reviewRequired', r.review_required,
  'basedOn', r.based_on, 'createdAt', r.created_at, 'review', ${REVIEW})`;
type PostToRead = PostText & {
  handle: string;
  blogCreatedFor: string;
  role: Role | null;
  revisions: ReviewedText[] | null;
};
// The revisions a post's message holds, as views.ts `postView` chooses them: the one its reader sees (a member of
// the blog the current, anyone else the published or else the current), and the published one.
const postToRead = new HotRead<PostToRead, [string, string | null]>(
  "posts.to_read",
  `select ${POST_COLUMNS}, b.handle, b.created_for as "blogCreatedFor", m.role,
      (select json_agg(${REVISION_JSON}) from {post_revisions} r where r.post_id = p.id and r.n in (
        case when m.role is null then coalesce(p.published_revision, p.current_revision) else p.current_revision end,
        coalesce(p.published_revision, p.current_revision))) as revisions
    from {posts} p join {blogs} b on b.id = p.blog_id
      left join {members} m on m.blog_id = p.blog_id and m.subject = $2
    where p.id = $1`,
);

/**
 * A post to read in one statement: the post, its blog's handle and subject, the reader's role in the blog, and the
 * revisions its message holds with the reviews that count for them.
 */
export async function readPostToRead(
  ctx: ReadContext,
  id: string,
  person: string | undefined,
): Promise<
  | {
      post: PostRow;
      blog: Pick<BlogRow, "handle" | "createdFor">;
      role: Role | undefined;
      revisions: RevisionRow[];
      reviews: ReviewRow[];
    }
  | undefined
> {
  const [row] = await postToRead.run(ctx, id, person ?? null);
  if (!row) return undefined;
  const { handle, blogCreatedFor, role, revisions, ...post } = row;
  return {
    post: postOf(post),
    blog: { handle, createdFor: blogCreatedFor },
    role: role ?? undefined,
    ...reviewedOf(revisions ?? []),
  };
}

const SCHEDULE_COLUMNS = `s.id, s.post_id as "postId", s.action, s.at, s.revision, s.scheduled_by as "scheduledBy",
  s.state, s.failure, s.created_at as "createdAt", s.done_at as "doneAt"`;
type ScheduleText = Omit<ScheduleRow, "at" | "createdAt" | "doneAt"> &
  Record<"at" | "createdAt", string> & { doneAt: string | null };
const pendingOfPosts = new HotRead<ScheduleText, [string[]]>(
  "schedules.pending_of_posts",
  `select ${SCHEDULE_COLUMNS} from {schedules} s where s.post_id = any($1) and s.state = 'pending' order by s.at`,
);

/** The pending schedules of posts, soonest first (as db/posts.ts pendingSchedules). */
export async function readPendingSchedules(ctx: ReadContext, postIds: string[]): Promise<ScheduleRow[]> {
  return (await pendingOfPosts.run(ctx, postIds)).map(({ at, createdAt, doneAt, ...row }) => ({
    ...row,
    at: date(at),
    createdAt: date(createdAt),
    doneAt: dateOrNull(doneAt),
  }));
}
