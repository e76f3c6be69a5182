import type { ServiceImpl } from "@connectrpc/connect";
import type { BlogContentService } from "../../../gen/pf/blog/v1/content_pb.js";
import { contentAccessHandler, NOT_FOUND, OPEN } from "../../kit/rpc/content-access.js";
import type { BlogContext } from "../context.js";
import { blogById } from "../db/blogs.js";
import { postById } from "../db/posts.js";
import { seen, sightOf } from "../readers.js";

/**
 * What a reader may see of a post, for its community thread (internal, community only): open exactly when the post
 * read answers the person the post; deleted, draft, private and members-only posts they are not entitled to are
 * not found, as the post read answers them (410 or 404).
 */
export function contentHandlers(ctx: BlogContext): ServiceImpl<typeof BlogContentService> {
  return contentAccessHandler({
    async post(id, reader) {
      const person = reader.subject || undefined;
      const found = await ctx.transaction(async (em) => {
        const post = await postById(em, id);
        if (!post || post.state === "deleted") return undefined;
        return { blog: (await blogById(em, post.blogId))!, sight: await sightOf(em, post, person) };
      });
      return found && (await seen(ctx, found.sight, person, found.blog)) ? OPEN : NOT_FOUND;
    },
  });
}
