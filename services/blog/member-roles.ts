import { problem } from "../kit/handler/problem.js";
import type { RelationResolver } from "../kit/rpc/relations.js";
import type { BlogContext } from "./context.js";
import { blogByHandle, roleOf } from "./db/blogs.js";
import { postById } from "./db/posts.js";

/**
 * The member roles (owner, editor, author) as the relations blog's protos declare, enforced by the kit before the
 * handler: `owner` and `member` of the blog a request names by handle, `post_member` of the blog a post belongs to.
 * A missing blog or post answers its 404 here, as the handler would have, so the refusal never tells it exists.
 */
export const memberRoles = {
  owner: async (ctx, { person, scope }) => ((await roleByHandle(ctx, scope, person)) === "owner" ? "owner" : undefined),
  member: (ctx, { person, scope }) => roleByHandle(ctx, scope, person),
  post_member: (ctx, { person, scope }) =>
    ctx.transaction(async (em) => {
      const post = await postById(em, scope);
      if (!post) throw problem(404, "post.not_found", "No such post.");
      return roleOf(em, post.blogId, person);
    }),
} satisfies Record<string, RelationResolver<BlogContext>>;

function roleByHandle(ctx: BlogContext, handle: string, person: string) {
  return ctx.transaction(async (em) => {
    const blog = await blogByHandle(em, handle.toLowerCase());
    if (!blog) throw problem(404, "blog.not_found", "No blog has this handle.");
    return roleOf(em, blog.id, person);
  });
}
