import type { EntityManager } from "@mikro-orm/postgresql";
import { problem } from "../kit/handler/problem.js";
import { vipMember } from "../kit/rpc/vip-membership.js";
import type { BlogContext } from "./context.js";
import { roleOf } from "./db/blogs.js";
import type { BlogRow, PostRow } from "./db/entities.js";
import type { Role } from "./domain/blogs.js";

/** What the reads need of a post's blog: whose it is (vip's members-only posts are that person's members'). */
type Blog = Pick<BlogRow, "createdFor">;

/**
 * Who reads a post, shared by the post reads and the content access community asks about a post's comment thread,
 * so a thread answers exactly as its post does.
 */

/** How a caller may see a post: as a member (everything), a reader (the published revision), or only if vip says so. */
export type Sight = "member" | "reader" | "entitled?" | "none";

/** A person's sight of a post; 410 post.deleted for a deleted one. */
export async function sightOf(em: EntityManager, post: PostRow, person: string | undefined): Promise<Sight> {
  return sightWith(post, await roleOf(em, post.blogId, person));
}

/** `sightOf` with the person's role in the post's blog already read (undefined: none). */
export function sightWith(post: PostRow, role: Role | undefined): Sight {
  if (post.state === "deleted") throw problem(410, "post.deleted", "The post was deleted.");
  if (role !== undefined) return "member";
  if (post.state !== "published" || post.visibility === "private") return "none";
  return post.visibility === "members-only" ? "entitled?" : "reader";
}

/** Whether vip entitles the person to the blog owner's members-only posts; vip not answering is no. */
async function entitled(ctx: BlogContext, person: string | undefined, blog: Blog): Promise<boolean> {
  if (person === undefined || !person.startsWith("usr_")) return false;
  return vipMember(ctx.vip, ctx.logger, { subject: person, creator: blog.createdFor });
}

/** Whether the caller may read the post at all (vip asked outside any transaction). */
export async function seen(ctx: BlogContext, sight: Sight, person: string | undefined, blog: Blog): Promise<boolean> {
  return sight === "member" || sight === "reader" || (sight === "entitled?" && (await entitled(ctx, person, blog)));
}
