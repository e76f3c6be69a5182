import type { ServiceImpl } from "@connectrpc/connect";
import type { NewsContentService } from "../../../gen/pf/news/v1/content_pb.js";
import { contentAccessHandler, NOT_FOUND, OPEN } from "../../kit/rpc/content-access.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { storyById } from "../db/stories.js";
import { storyOpenTo } from "../readers.js";

/**
 * What a reader may see of a story, for its community thread (internal, community only), as the story read
 * answers: published and retracted stories to anyone, drafts and unpublished ones to editor people only.
 */
export function contentHandlers(ctx: ServiceContext): ServiceImpl<typeof NewsContentService> {
  return contentAccessHandler({
    async story(id, reader) {
      const story = await ctx.transaction((em) => storyById(em, id));
      if (!story) return NOT_FOUND;
      return (await storyOpenTo(ctx, story, reader.subject)) ? OPEN : NOT_FOUND;
    },
  });
}
