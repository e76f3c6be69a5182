import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { PostReadResultSchema, type PostService } from "../../../gen/pf/blog/v1/posts_pb.js";
import { personOf, principalOf } from "../../kit/auth/principal.js";
import { decodeTextCursor, decodeTimeCursor, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { diffRevisions } from "../../kit/revisions/diff.js";
import { revisionDiffToProto } from "../../kit/revisions/proto.js";
import { resolveSlug } from "../../kit/slugs/slugs.js";
import type { BlogContext } from "../context.js";
import { blogById } from "../db/blogs.js";
import type { BlogRow, PostRow } from "../db/entities.js";
import { readPendingSchedules, readPostPage, readPostToRead } from "../db/post-reads.js";
import { latestReviews, postById, revisionOf, revisionPage, revisionsOf, slugScope } from "../db/posts.js";
import { seen, sightOf, sightWith, type Sight } from "../readers.js";
import { blogToRead, loadBlog } from "../ownership.js";
import { postMessage, readPostViews, revisionToProto } from "../views.js";

type ReadHandlers = Pick<
  ServiceImpl<typeof PostService>,
  "getPost" | "getPostBySlug" | "listPosts" | "listRevisions" | "getRevision" | "getDiff"
>;

const TEXT_FIELDS = ["title", "summary", "body"] as const;

/**
 * Reads. Deleted: 410 post.deleted; unpublished, missing, or not the caller's to see: 404 post.not_found (the same
 * answer). Members of the blog see every post, its revisions and diffs; members-only posts are for the blog
 * owner's vip members as well (asked outside the transaction).
 */
export function readHandlers(ctx: BlogContext): ReadHandlers {
  const notFound = () => problem(404, "post.not_found", "No such post.");

  /**
   * The post read as the caller may see it, or 404: a hot read (one statement: the post with its blog, the reader's
   * role and the revisions it shows; no transaction), vip asked after it when it must be, and a member's pending
   * schedules.
   */
  async function read(call: HandlerContext, id: string) {
    const person = personOf(principalOf(call));
    const found = await readPostToRead(ctx, id, person);
    if (!found) throw notFound();
    const sight = sightWith(found.post, found.role);
    if (!(await seen(ctx, sight, person, found.blog))) throw notFound();
    const member = sight === "member";
    const schedules = member ? await readPendingSchedules(ctx, [found.post.id]) : [];
    return create(PostReadResultSchema, {
      post: postMessage(found.post, found.blog.handle, { ...found, schedules }, { member }),
    });
  }

  /**
   * For revisions and diffs: members only. 403 blog.member_required only to a caller who may read the post itself;
   * anyone else gets the post read's 404, so neither route tells that a post they may not see exists.
   */
  async function asMember<T>(call: HandlerContext, id: string, work: (em: EntityManager, post: PostRow) => Promise<T>) {
    const person = personOf(principalOf(call));
    const found: { done: T } | { sight: Sight; blog: BlogRow } = await ctx.transaction(async (em) => {
      const post = await postById(em, id);
      if (!post) throw notFound();
      const sight = await sightOf(em, post, person);
      if (sight === "member") return { done: await work(em, post) };
      return { sight, blog: (await blogById(em, post.blogId))! };
    });
    if ("done" in found) return found.done;
    if (!(await seen(ctx, found.sight, person, found.blog))) throw notFound();
    throw problem(403, "blog.member_required", "Revisions and diffs are for members.");
  }

  return {
    getPost: (request, call) => read(call, request.id),

    async getPostBySlug(request, call) {
      const target = await ctx.transaction(async (em) => {
        const blog = await loadBlog(em, request.handle);
        return { blog, slug: await resolveSlug(em, slugScope(blog.id), request.slug) };
      });
      if (!target.slug) throw notFound();
      if (target.slug.moved) {
        // Relative to the path asked (…/by-slug/<old>), so it holds behind any base path.
        call.responseHeader.set("location", encodeURIComponent(target.slug.slug));
        answerStatus(call, 301);
        return create(PostReadResultSchema, { movedTo: target.slug.slug });
      }
      return read(call, target.slug.objectId);
    },

    /** all=1 is for members: the declared `member` relation, required when `all` is set. */
    async listPosts(request) {
      // limit is 1-200 (declared); a page holds at most 100.
      const limit = Math.min(request.limit ?? 20, 100);
      const after = decodeTimeCursor(request.cursor);
      // Hot reads: the page, then all its posts' revisions with their reviews in one statement.
      const blog = await blogToRead(ctx, request.handle);
      const rows = await readPostPage(ctx, blog.id, { all: request.all, rows: limit + 1, after });
      const { items, nextCursor } = page(rows, limit, (row) => [
        (request.all ? row.createdAt : row.publishedAt)!.toISOString(),
        row.id,
      ]);
      const posts = await readPostViews(ctx, items, blog.handle, { member: request.all, listing: true });
      return create(PostReadResultSchema, { posts, nextCursor });
    },

    listRevisions: (request, call) =>
      asMember(call, request.id, async (em, post) => {
        const limit = Math.min(request.limit ?? 20, 100);
        const [before] = decodeTextCursor(request.cursor, 1) ?? [String(post.currentRevision + 1)];
        const rows = await revisionPage(em, post.id, Number(before), limit + 1);
        const reviews = await latestReviews(
          em,
          post.id,
          rows.map((row) => row.n),
        );
        const { items, nextCursor } = page(rows, limit, (row) => [String(row.n)]);
        return create(PostReadResultSchema, {
          revisions: items.map((row) => revisionToProto(row, reviews.get(row.n), true)),
          nextCursor,
        });
      }),

    getRevision: (request, call) =>
      asMember(call, request.id, async (em, post) => {
        const row = await revisionOf(em, post.id, request.n);
        if (!row) throw problem(404, "revision.not_found", `The post has no revision ${request.n}.`);
        const reviews = await latestReviews(em, post.id, [row.n]);
        return create(PostReadResultSchema, { revision: revisionToProto(row, reviews.get(row.n)) });
      }),

    getDiff: (request, call) =>
      asMember(call, request.id, async (em, post) => {
        const to = request.to || post.currentRevision;
        const from = request.from || Math.max(1, to - 1);
        for (const [field, n] of [
          ["from", from],
          ["to", to],
        ] as const)
          if (n < 1 || n > post.currentRevision)
            throw invalid(field, `${field} is a revision of the post (1-${post.currentRevision}).`);
        const rows = new Map((await revisionsOf(em, post.id, [from, to])).map((row) => [row.n, row]));
        const text = (n: number) => {
          const row = rows.get(n)!;
          return { n, text: { title: row.title, summary: row.summary, body: row.body } };
        };
        return create(PostReadResultSchema, {
          diff: revisionDiffToProto(diffRevisions(text(from), text(to), TEXT_FIELDS)),
        });
      }),
  };
}
