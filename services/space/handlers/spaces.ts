import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ForumReadResultSchema } from "../../../gen/pf/space/v1/forum_pb.js";
import type { SpaceAdminService } from "../../../gen/pf/space/v1/admin_pb.js";
import type { SpaceService } from "../../../gen/pf/space/v1/space_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import type { SpaceContext } from "../context.js";
import { readSpace, readSpaces, spaceIn, spaceToProto, upsertSpace, visibilityFromProto } from "../db/spaces.js";
import { spaceProblem, type SpaceSeed } from "../domain/spaces.js";
import { openedBy, readerOf, see } from "../readers.js";

type SpaceHandlers = Pick<ServiceImpl<typeof SpaceService>, "listSpaces" | "getSpace">;

export function spaceHandlers(ctx: SpaceContext): SpaceHandlers {
  return {
    async listSpaces(_request, call) {
      const spaces = await openedBy(readerOf(ctx, call), await readSpaces(ctx));
      return create(ForumReadResultSchema, { spaces: spaces.map(spaceToProto) });
    },

    async getSpace(request, call) {
      // One space's metadata, members-only ones flagged: the gate is its threads', not its metadata's.
      const space = await see(readerOf(ctx, call), await readSpace(ctx, request.space));
      return create(ForumReadResultSchema, { space: spaceToProto(space), spaces: [spaceToProto(space)] });
    },
  };
}

type AdminHandlers = Pick<ServiceImpl<typeof SpaceAdminService>, "upsertSpace">;

export function adminHandlers(ctx: SpaceContext): AdminHandlers {
  return {
    async upsertSpace(request) {
      const visibility = visibilityFromProto(request.visibility);
      if (visibility === "") throw invalid("visibility", "visibility is public, members or staff");
      const space: SpaceSeed = {
        key: request.key,
        title: request.title,
        description: request.description,
        visibility,
        membersOnly: request.membersOnly,
        vipCreator: request.vipCreator,
      };
      const wrong = spaceProblem(space);
      if (wrong) throw invalid(...wrong);
      const stored = await ctx.transaction(async (em) => {
        await upsertSpace(em, space, ctx.clock.now());
        return spaceIn(em, space.key);
      });
      return create(ForumReadResultSchema, { space: spaceToProto(stored!), spaces: [spaceToProto(stored!)] });
    },
  };
}
