import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { FeedResultSchema, type BlogService } from "../../../gen/pf/blog/v1/blogs_pb.js";
import { answerVersioned } from "../../kit/feeds/answer.js";
import { FEED_CONTENT_TYPES, renderFeed, type FeedFormat, type FeedItem } from "../../kit/feeds/feed.js";
import { problem } from "../../kit/handler/problem.js";
import { markdownRendering } from "../../kit/rich-text/rendering.js";
import type { BlogContext } from "../context.js";
import type { BlogRow, PostRow } from "../db/entities.js";
import { readPostPage, readReviewedRevisions } from "../db/post-reads.js";
import { blogToRead } from "../ownership.js";

type FeedHandlers = Pick<ServiceImpl<typeof BlogService>, "getFeed" | "getPublicFeed">;

/** The public feed files and the setting that switches each on. */
const FILES: Record<string, { format: FeedFormat; on: (blog: BlogRow) => boolean }> = {
  "rss.xml": { format: "rss", on: (blog) => blog.feedRss },
  "atom.xml": { format: "atom", on: (blog) => blog.feedAtom },
  "feed.json": { format: "json", on: (blog) => blog.feedJson },
};
const SUMMARY_CHARS = 300;
/**
 * Markdown characters a full-text feed carries in full at most (about 2 MB of HTML; the spec gives no number): the
 * newest posts up to it carry their text, the rest their summary. 100 items of 200,000 characters would be 40 MB.
 */
const FULL_TEXT_CHARS = 1_000_000;

/**
 * Feeds: exactly the public, published, listed posts (the published revision), newest first, as many as the
 * blog's item count, full text or summaries as it says. The route and the public JSON Feed URL hold the same items.
 *
 * A feed is named, before any work, by its version: the blog's settings and, per post, its id, slug, dates,
 * taxonomy and published revision (revisions are immutable). A reader holding that ETag gets 304; anyone else
 * the feed made once per version (kit `answerVersioned`): its revisions read, then their Markdown rendered off the
 * event loop.
 */
export function feedHandlers(ctx: BlogContext): FeedHandlers {
  async function feed(call: HandlerContext, handle: string, format: FeedFormat, check?: (blog: BlogRow) => boolean) {
    // Hot reads, outside any transaction: a feed is read far more often than it changes.
    const blog = await blogToRead(ctx, handle);
    if (check && !check(blog)) throw problem(404, "feed.disabled", "This feed is switched off for the blog.");
    const posts = await readPostPage(ctx, blog.id, { all: false, rows: blog.feedItems });
    const site = `${ctx.settings.siteUrl}/${blog.handle}`;
    const feedLink = `${ctx.settings.siteUrl}/feeds/${blog.handle}/${fileOf(format)}`;
    return create(FeedResultSchema, {
      feed: await answerVersioned(call, {
        contentType: FEED_CONTENT_TYPES[format],
        maxAgeSeconds: ctx.settings.feedMaxAgeSeconds,
        version: versionOf(blog, posts, feedLink),
        make: async () => {
          const items = await itemsOf(blog, posts, site);
          const model = {
            title: blog.title,
            description: blog.description,
            siteLink: site,
            feedLink,
            language: blog.language || undefined,
            items,
          };
          return renderFeed(model, format).body;
        },
      }),
    });
  }

  /** The posts' items: the published revisions read (one statement), then their Markdown rendered. */
  async function itemsOf(blog: BlogRow, posts: PostRow[], site: string): Promise<FeedItem[]> {
    const keys = posts.map((post) => ({ postId: post.id, n: post.publishedRevision! }));
    const read = await readReviewedRevisions(ctx, keys, true);
    const revisions = new Map(read.revisions.map((row) => [row.postId, row]));
    const rendering = markdownRendering();
    let fullText = blog.feedFullText ? FULL_TEXT_CHARS : 0;
    return Promise.all(
      posts.map(async (post): Promise<FeedItem> => {
        const revision = revisions.get(post.id)!;
        const full = blog.feedFullText && revision.body.length <= fullText;
        if (full) fullText -= revision.body.length;
        const [summary, contentHtml] = await Promise.all([
          revision.summary || rendering.excerpt(revision.body, SUMMARY_CHARS),
          full ? rendering.html(revision.body) : undefined,
        ]);
        return {
          id: post.id,
          title: revision.title,
          link: `${site}/${encodeURIComponent(post.slug)}`,
          date: new Date(post.publishedAt!),
          updated: new Date(post.updatedAt),
          summary,
          ...(contentHtml !== undefined ? { contentHtml } : {}),
          ...(post.authorKind === "ai" ? { author: "AI" } : {}),
          categories: post.taxonomy,
        };
      }),
    );
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

/** Everything a feed's bytes depend on, read before any of them are made (its ETag). */
function versionOf(blog: BlogRow, posts: PostRow[], feedLink: string): string {
  return JSON.stringify({
    feedLink,
    blog: [blog.id, blog.title, blog.description, blog.language, blog.feedFullText, SUMMARY_CHARS, FULL_TEXT_CHARS],
    posts: posts.map((post) => [
      post.id,
      post.slug,
      post.publishedRevision,
      post.publishedAt,
      post.updatedAt,
      post.taxonomy,
      post.authorKind,
    ]),
  });
}

function fileOf(format: FeedFormat): string {
  return Object.entries(FILES).find(([, file]) => file.format === format)![0];
}
