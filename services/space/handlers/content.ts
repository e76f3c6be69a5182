import type { ServiceImpl } from "@connectrpc/connect";
import type { SpaceContentService } from "../../../gen/pf/space/v1/content_pb.js";
import { problemOf } from "../../kit/handler/problem.js";
import { contentAccessHandler, NOT_FOUND, OPEN } from "../../kit/rpc/content-access.js";
import type { SpaceContext } from "../context.js";
import { readerFor } from "../readers.js";
import { threadTarget } from "../targets.js";

/**
 * What a reader may see of a forum thread, for its community comment thread (internal, community only): the
 * thread named by id through the same visibility and members-only gate as community's forum writes. A space the
 * reader cannot open is not found; a members-only space they are not entitled to is members-only (space's 403
 * vip.members_only); vouched staff are moderators. A deleted thread stays a readable tombstone: open.
 */
export function contentHandlers(ctx: SpaceContext): ServiceImpl<typeof SpaceContentService> {
  return contentAccessHandler({
    async thread(id, reader) {
      const who = readerFor(ctx, { person: reader.subject, staff: reader.staff, ownToken: false });
      try {
        await threadTarget(ctx, who, { id });
        return OPEN;
      } catch (error) {
        const refused = problemOf(error);
        if (refused.code === "thread.not_found") return NOT_FOUND;
        const creator = refused.extensions?.creator;
        if (refused.code === "vip.members_only")
          return { access: "members_only", creator: typeof creator === "string" ? creator : "" };
        throw error;
      }
    },
  });
}
