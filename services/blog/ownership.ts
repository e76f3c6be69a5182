import type { HandlerContext } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { callerOf } from "../kit/auth/principal.js";
import { problem } from "../kit/handler/problem.js";
import type { BlogContext } from "./context.js";
import type { ReadContext } from "../kit/db/reads.js";
import { blogByHandle, blogById, roleOf } from "./db/blogs.js";
import { readBlog } from "./db/post-reads.js";
import type { BlogRow, PostRow } from "./db/entities.js";
import { postById } from "./db/posts.js";
import type { Role } from "./domain/blogs.js";
import { mayEdit } from "./domain/posts.js";

/** Row ownership of blogs and posts: who holds which role (the route's access rule admitted the caller already). */

const blogNotFound = () => problem(404, "blog.not_found", "No blog has this handle.");

export async function loadBlog(em: EntityManager, handle: string, lock = false): Promise<BlogRow> {
  const blog = await blogByHandle(em, handle.toLowerCase(), lock);
  if (!blog) throw blogNotFound();
  return blog;
}

/** `loadBlog` for the public reads: a hot read, outside any transaction. */
export async function blogToRead(ctx: ReadContext, handle: string): Promise<BlogRow> {
  const blog = await readBlog(ctx, handle.toLowerCase());
  if (!blog) throw blogNotFound();
  return blog;
}

export const isOfficial = (ctx: BlogContext, blog: BlogRow) =>
  ctx.settings.officialHandle !== "" && blog.handle === ctx.settings.officialHandle;

/**
 * Admitted by the route's `staff` alternative (a service or app for nobody, or a person a service vouches as staff),
 * not by the member relation its main rule declares.
 */
export const admittedAsStaff = (call: HandlerContext) => callerOf(call).admittedBy === "staff";

/** Staff configure only the official blog (owners, admitted by the declared `owner` relation, any of theirs). */
export function requireOfficialForStaff(ctx: BlogContext, blog: BlogRow, call: HandlerContext): void {
  if (admittedAsStaff(call) && !isOfficial(ctx, blog))
    throw problem(403, "blog.owner_required", "Only an owner of the blog may do this; staff only the official one.");
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

/**
 * Editors and owners edit every post, authors their own (row ownership): 403 blog.not_author otherwise. The role is
 * the one the declared `post_member` relation found (blog.member_required to anyone outside it).
 */
export function requirePostEditor(call: HandlerContext, post: PostRow, person: string | undefined): void {
  requireMayEdit(callerOf(call).relation!.role as Role, person, post);
}

/**
 * For the scheduler, applying a schedule long after the call: the person who scheduled it must still hold a role
 * that may edit the post (removed or demoted since: 403 blog.member_required or blog.not_author), read in its
 * transaction. No caller to declare a relation for: it is the schedule's standing, not a route's.
 */
export async function requireStillEditor(em: EntityManager, post: PostRow, person: string): Promise<void> {
  const role = await roleOf(em, post.blogId, person);
  if (role === undefined) throw problem(403, "blog.member_required", "Only members of the blog may do this.");
  requireMayEdit(role, person, post);
}

function requireMayEdit(role: Role, person: string | undefined, post: PostRow): void {
  if (!mayEdit(role, person, postPerson(post)))
    throw problem(403, "blog.not_author", "Authors edit only their own posts.");
}
