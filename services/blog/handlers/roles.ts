import type { HandlerContext } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { callerOf } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { BlogContext } from "../context.js";
import { blogByHandle, blogById, roleOf } from "../db/blogs.js";
import type { BlogRow, PostRow } from "../db/entities.js";
import { postById } from "../db/posts.js";
import type { Role } from "../domain/blogs.js";
import { mayEdit } from "../domain/posts.js";

/** Row ownership of blogs and posts: who holds which role (the route's access rule admitted the caller already). */

export async function loadBlog(em: EntityManager, handle: string, lock = false): Promise<BlogRow> {
  const blog = await blogByHandle(em, handle.toLowerCase(), lock);
  if (!blog) throw problem(404, "blog.not_found", "No blog has this handle.");
  return blog;
}

export const isOfficial = (ctx: BlogContext, blog: BlogRow) =>
  ctx.settings.officialHandle !== "" && blog.handle === ctx.settings.officialHandle;

/** Admitted as staff (the route's main rule): a service or app for nobody, or a person a service vouches as staff. */
export const admittedAsStaff = (call: HandlerContext) => callerOf(call).staff !== undefined;

/** Owners; staff too on the official blog where `staff` allows it. 403 blog.owner_required otherwise. */
export async function requireOwner(
  ctx: BlogContext,
  em: EntityManager,
  blog: BlogRow,
  call: HandlerContext,
  options: { staff: boolean },
): Promise<void> {
  if (options.staff && admittedAsStaff(call) && isOfficial(ctx, blog)) return;
  if ((await roleOf(em, blog.id, callerOf(call).person)) === "owner") return;
  throw problem(403, "blog.owner_required", "Only an owner of the blog may do this.");
}

/** The person a post belongs to for "authors edit their own posts": its author, or who asked for an AI draft. */
export const postPerson = (post: PostRow) =>
  post.authorKind === "person" ? post.author : (post.requestedBy ?? undefined);

/** A post for a write: 404 post.not_found; 409 post.deleted on a deleted one. */
export async function loadPostForWrite(em: EntityManager, id: string): Promise<{ post: PostRow; blog: BlogRow }> {
  const post = await postById(em, id, true);
  if (!post) throw problem(404, "post.not_found", "No such post.");
  if (post.state === "deleted") throw problem(409, "post.deleted", "The post is deleted.");
  const blog = await blogById(em, post.blogId);
  return { post, blog: blog! };
}

/** Editors and owners edit every post, authors their own: 403 blog.member_required or blog.not_author otherwise. */
export async function requirePostEditor(em: EntityManager, post: PostRow, person: string | undefined): Promise<Role> {
  const role = await roleOf(em, post.blogId, person);
  if (role === undefined) throw problem(403, "blog.member_required", "Only members of the blog may do this.");
  if (!mayEdit(role, person, postPerson(post)))
    throw problem(403, "blog.not_author", "Authors edit only their own posts.");
  return role;
}
