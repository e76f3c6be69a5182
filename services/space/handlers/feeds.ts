import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { ThreadReadResultSchema } from "../../../gen/pf/space/v1/forum_pb.js";
import type { SpaceService } from "../../../gen/pf/space/v1/space_pb.js";
import { answerVersioned, preferredType } from "../../kit/feeds/answer.js";
import { FEED_CONTENT_TYPES, renderFeed, type FeedItem } from "../../kit/feeds/feed.js";
import { markdownRendering } from "../../kit/rich-text/rendering.js";
import type { SpaceContext } from "../context.js";
import { readSpace, readSpaces, spaceToProto, type StoredSpace } from "../db/spaces.js";
import { readNewestThreads, threadToProto } from "../db/threads.js";
import { opens } from "../domain/spaces.js";
import { enter, type Reader } from "../readers.js";

type FeedHandlers = Pick<ServiceImpl<typeof SpaceService>, "readForumFeed" | "readSpaceFeed">;

/**
 * Feeds are documents for anonymous readers, whoever asks (shared caches keep
 * them): a token never adds a members, staff or members-only thread to one.
 */
const ANONYMOUS: Reader = { person: "", reachFor: async () => "anonymous" };

/** What an anonymous reader may read in full: public spaces that are not members-only. */
const openToAll = (space: StoredSpace) => opens(space.visibility, "anonymous") && !space.membersOnly;

/** Characters of a first post's text in its feed item. */
const SUMMARY_CHARS = 300;

export function feedHandlers(ctx: SpaceContext): FeedHandlers {
  const site = ctx.settings.siteUrl;

  /** RSS 2.0, or with Accept preferring application/json the space.thread-read-result@1 of the same threads. */
  async function answer(
    call: HandlerContext,
    spaces: StoredSpace[],
    feed: { title: string; page: string; self: string },
  ) {
    const threads = await readNewestThreads(
      ctx,
      spaces.map((space) => space.key),
      ctx.settings.feedItems,
    );
    const result = create(ThreadReadResultSchema, {
      threads: threads.map((thread) => threadToProto(thread)),
      space: spaces.length === 1 && feed.page !== "/s" ? spaceToProto(spaces[0]) : undefined,
    });
    const wanted = preferredType(call, ["application/rss+xml", "application/xml", "text/xml", "application/json"]);
    if (wanted === "application/json") return result;
    // Named before any work by what it shows (each first post by its revision): 304, or made once per version.
    const version = JSON.stringify({
      feed,
      summary: SUMMARY_CHARS,
      threads: threads.map((t) => [t.id, t.space, t.slug, t.title, t.createdAt, t.authorKind, t.bodyRevision]),
    });
    result.feed = await answerVersioned(call, {
      contentType: FEED_CONTENT_TYPES.rss,
      maxAgeSeconds: ctx.settings.feedMaxAgeSeconds,
      version: `${site}\n${version}`,
      make: async () => {
        const items: FeedItem[] = await Promise.all(
          threads.map(async (thread) => ({
            id: `${site}/s/${thread.space}/t/${thread.slug}`,
            title: thread.title,
            link: `${site}/s/${thread.space}/t/${thread.slug}`,
            date: new Date(thread.createdAt),
            summary: await markdownRendering().excerpt(thread.body ?? "", SUMMARY_CHARS),
            ...(thread.authorKind === "ai" ? { author: "AI", categories: ["AI"] } : {}),
          })),
        );
        const model = { title: feed.title, siteLink: `${site}${feed.page}`, feedLink: `${site}${feed.self}`, items };
        return renderFeed(model, "rss").body;
      },
    });
    return result;
  }

  return {
    async *readForumFeed(_request, call) {
      const spaces = (await readSpaces(ctx)).filter(openToAll);
      yield await answer(call, spaces, { title: "Forum", page: "/s", self: "/s/feed.xml" });
    },

    async *readSpaceFeed(request, call) {
      const space = await enter(ctx, ANONYMOUS, await readSpace(ctx, request.space));
      const page = `/s/${space.key}`;
      yield await answer(call, [space], { title: space.title, page, self: `${page}/feed.xml` });
    },
  };
}
