import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { PostService, PostUpdateRequest } from "../../../gen/pf/blog/v1/posts_pb.js";
import {
  DeleteResultSchema,
  PostCreateResultSchema,
  PostUpdateResultSchema,
} from "../../../gen/pf/blog/v1/posts_pb.js";
import { actingPerson, callerOf } from "../../kit/auth/principal.js";
import { approverOf, authorColumns } from "../../kit/auth/authorship.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import { claimSlug } from "../../kit/slugs/slugs.js";
import type { BlogContext } from "../context.js";
import type { PostRow, RevisionRow } from "../db/entities.js";
import { appendRevision, cancelSchedules, insertPost, postById, slugScope, updatePost } from "../db/posts.js";
import { postDocuments } from "../db/search.js";
import { requireAttachments, requireSeries, requireTerms, withAttachment } from "../domain/posts.js";
import { postChanged } from "../events.js";
import { expectedRevisionOf, postAuthorOf, recordReview, saveRevision, type Revise } from "../revisions.js";
import { admittedAsStaff, loadBlog, loadPostForWrite, requirePostEditor } from "../ownership.js";
import { postView } from "../views.js";

type PostHandlers = Pick<
  ServiceImpl<typeof PostService>,
  "createPost" | "updatePost" | "addAttachment" | "removeAttachment" | "revertPost" | "deletePost"
>;

const NO_AI = { workflow: "", runId: "", stubProvider: false };

export function postHandlers(ctx: BlogContext): PostHandlers {
  /** A new revision of a post the caller may edit, answered as members see it. */
  async function revise(
    call: HandlerContext,
    id: string,
    expectedBody: bigint | undefined,
    change: (post: PostRow) => Revise,
  ) {
    const person = actingPerson(call);
    const author = await postAuthorOf(ctx.ai, call, NO_AI);
    const expected = expectedRevisionOf(call, expectedBody);
    return ctx.transaction(async (em) => {
      const { post, blog } = await loadPostForWrite(em, id);
      requirePostEditor(call, post, person);
      await saveRevision(em, post, author, expected, change(post), ctx.clock.now());
      return create(PostUpdateResultSchema, { post: await postView(em, post, blog.handle, { member: true }) });
    });
  }

  return {
    async createPost(request, call) {
      const person = actingPerson(call);
      const wf = request.authorship?.workflow;
      const author = await postAuthorOf(ctx.ai, call, {
        workflow: wf?.id ?? "",
        runId: wf?.runId ?? "",
        stubProvider: wf?.stubProvider,
      });
      // Title, summary and body lengths, the visibility, and at most 20 terms and med_ attachments are declared.
      const { title, summary, body } = request;
      const visibility = request.visibility || "public";
      const taxonomy = requireTerms("taxonomy", request.taxonomy);
      const series = requireSeries(request.series);
      const attachments = requireAttachments(request.attachments);
      const once = idempotencyOf(call, request, { scope: `post:${person}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const blog = await loadBlog(em, request.handle);
          const at = ctx.clock.now();
          const id = newId("pst", at.getTime());
          const columns = authorColumns(author);
          const post = {
            id,
            blogId: blog.id,
            ...columns,
            slug: "",
            state: "draft",
            visibility,
            taxonomy,
            series,
            attachments,
            listed: request.listed ?? true,
            currentRevision: 1,
            publishedRevision: null,
            version: 1n,
            publishedAt: null,
            deletedAt: null,
            createdAt: at,
            updatedAt: at,
          } satisfies PostRow;
          await insertPost(em, post);
          await updatePost(em, post, {
            slug: await claimSlug(em, slugScope(blog.id), id, request.slug || title, { at }),
          });
          await appendRevision(em, {
            postId: id,
            title,
            summary,
            body,
            ...columns,
            reviewRequired: author.kind === "ai",
            basedOn: null,
            createdAt: at,
          } as Omit<RevisionRow, "n">);
          await postChanged(em, post, "created", columns.author, at);
          return create(PostCreateResultSchema, { post: await postView(em, post, blog.handle, { member: true }) });
        }),
      );
    },

    async updatePost(request, call) {
      if (request.review) {
        if (hasEdits(request)) throw invalid("review", "A review records no edit: send it alone.");
        return review(request, call);
      }
      const change = editsOf(request);
      return revise(call, request.id, request.expectedRevision, () => change);
    },

    async addAttachment(request, call) {
      return revise(call, request.id, request.expectedRevision, (post) => ({
        settings: { attachments: withAttachment(post.attachments, request.mediaId) },
      }));
    },

    async removeAttachment(request, call) {
      const media = request.aid;
      return revise(call, request.id, request.expectedRevision, (post) => {
        if (!post.attachments.includes(media))
          throw problem(404, "attachment.not_found", "The post has no such attachment.");
        return { settings: { attachments: post.attachments.filter((each) => each !== media) } };
      });
    },

    async revertPost(request, call) {
      return revise(call, request.id, request.expectedRevision, () => ({ basedOn: request.revision }));
    },

    async deletePost(request, call) {
      return ctx.transaction(async (em) => {
        const post = await postById(em, request.id, true);
        if (!post) throw problem(404, "post.not_found", "No such post.");
        if (!admittedAsStaff(call)) requirePostEditor(call, post, callerOf(call).person);
        if (post.state !== "deleted") await deleteNow(em, post, callerOf(call).staff ?? callerOf(call).person ?? "");
        return create(DeleteResultSchema, {
          id: post.id,
          deletedAt: timestampFromDate(new Date(post.deletedAt!)),
        });
      });
    },
  };

  /** Deleted: readers get 410, search a tombstone, pending schedules end, the comment thread is hidden (the event). */
  async function deleteNow(em: EntityManager, post: PostRow, actor: string) {
    const at = ctx.clock.now();
    await updatePost(em, post, { state: "deleted", deletedAt: at, version: BigInt(post.version) + 1n, updatedAt: at });
    await cancelSchedules(em, post.id, at);
    await postChanged(em, post, "deleted", actor, at);
    await refreshSearchDocuments(em, postDocuments, [post.id], at);
  }

  /** A review recorded by PATCH (no new revision): a person who may edit the post, never AI output. */
  function review(request: PostUpdateRequest, call: HandlerContext) {
    const reviewer = approverOf(call);
    return ctx.transaction(async (em) => {
      const { post, blog } = await loadPostForWrite(em, request.id);
      requirePostEditor(call, post, reviewer);
      await recordReview(em, post, request.review!, reviewer, ctx.clock.now());
      return create(PostUpdateResultSchema, { post: await postView(em, post, blog.handle, { member: true }) });
    });
  }
}

function hasEdits(request: PostUpdateRequest): boolean {
  const { title, summary, body, slug, visibility, taxonomy, series, listed } = request;
  return [title, summary, body, slug, visibility, taxonomy, series, listed].some((each) => each !== undefined);
}

/** The edits of a PATCH (lengths, visibility and a slug not blank are declared), checked before any transaction. */
function editsOf(request: PostUpdateRequest): Revise {
  const content: Revise["content"] = {};
  if (request.title !== undefined) content.title = request.title;
  if (request.summary !== undefined) content.summary = request.summary;
  if (request.body !== undefined) content.body = request.body;
  const settings: Revise["settings"] = {};
  if (request.visibility !== undefined) settings.visibility = request.visibility;
  if (request.taxonomy !== undefined) settings.taxonomy = requireTerms("taxonomy.terms", request.taxonomy.terms);
  if (request.series !== undefined) settings.series = requireSeries(request.series);
  if (request.listed !== undefined) settings.listed = request.listed;
  return { content, settings, slug: request.slug };
}
