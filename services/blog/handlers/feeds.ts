import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { FeedResultSchema, type BlogService } from "../../../gen/pf/blog/v1/blogs_pb.js";
import { answerDocument } from "../../kit/feeds/answer.js";
import { renderFeed, type FeedFormat, type FeedItem } from "../../kit/feeds/feed.js";
import { problem } from "../../kit/handler/problem.js";
import { excerpt, renderMarkdown } from "../../kit/rich-text/markdown.js";
import type { BlogContext } from "../context.js";
import type { BlogRow } from "../db/entities.js";
import { feedPosts, revisionsOf } from "../db/posts.js";
import { loadBlog } from "./roles.js";

type FeedHandlers = Pick<ServiceImpl<typeof BlogService>, "getFeed" | "getPublicFeed">;

/** The public feed files and the setting that switches each on. */
const FILES: Record<string, { format: FeedFormat; on: (blog: BlogRow) => boolean }> = {
  "rss.xml": { format: "rss", on: (blog) => blog.feedRss },
  "atom.xml": { format: "atom", on: (blog) => blog.feedAtom },
  "feed.json": { format: "json", on: (blog) => blog.feedJson },
};
const SUMMARY_CHARS = 300;

/**
 * Feeds: exactly the public, published, listed posts (the published revision), newest first, as many as the
 * blog's item count, full text or summaries as it says. The route and the public JSON Feed URL hold the same items.
 */
export function feedHandlers(ctx: BlogContext): FeedHandlers {
  async function feed(call: HandlerContext, handle: string, format: FeedFormat, check?: (blog: BlogRow) => boolean) {
    const { blog, items } = await ctx.transaction(async (em) => {
      const blog = await loadBlog(em, handle);
      if (check && !check(blog)) throw problem(404, "feed.disabled", "This feed is switched off for the blog.");
      const posts = await feedPosts(em, blog.id, blog.feedItems);
      const revisions = new Map<string, Awaited<ReturnType<typeof revisionsOf>>[number]>();
      for (const post of posts)
        for (const row of await revisionsOf(em, post.id, [post.publishedRevision!])) revisions.set(post.id, row);
      const site = `${ctx.settings.siteUrl}/${blog.handle}`;
      const items: FeedItem[] = posts.map((post) => {
        const revision = revisions.get(post.id)!;
        return {
          id: post.id,
          title: revision.title,
          link: `${site}/${encodeURIComponent(post.slug)}`,
          date: new Date(post.publishedAt!),
          updated: new Date(post.updatedAt),
          summary: revision.summary || excerpt(revision.body, SUMMARY_CHARS),
          ...(blog.feedFullText ? { contentHtml: renderMarkdown(revision.body) } : {}),
          ...(post.authorKind === "ai" ? { author: "AI" } : {}),
          categories: post.taxonomy,
        };
      });
      return { blog, items };
    });
    const site = `${ctx.settings.siteUrl}/${blog.handle}`;
    const rendered = renderFeed(
      {
        title: blog.title,
        description: blog.description,
        siteLink: site,
        feedLink: `${ctx.settings.siteUrl}/feeds/${blog.handle}/${fileOf(format)}`,
        language: blog.language || undefined,
        items,
      },
      format,
    );
    return create(FeedResultSchema, {
      feed: answerDocument(call, { ...rendered, maxAgeSeconds: ctx.settings.feedMaxAgeSeconds }),
    });
  }

  return {
    getFeed: (request, call) => feed(call, request.handle, "json"),
    getPublicFeed(request, call) {
      const file = FILES[request.file];
      if (!file) throw problem(404, "feed.not_found", "The feeds are rss.xml, atom.xml and feed.json.");
      return feed(call, request.handle, file.format, file.on);
    },
  };
}

function fileOf(format: FeedFormat): string {
  return Object.entries(FILES).find(([, file]) => file.format === format)![0];
}
