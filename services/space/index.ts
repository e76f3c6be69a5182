import { SpaceAdminService } from "../../gen/pf/space/v1/admin_pb.js";
import { SpaceContentService } from "../../gen/pf/space/v1/content_pb.js";
import { SpaceInternalService } from "../../gen/pf/space/v1/internal_pb.js";
import { SpaceService } from "../../gen/pf/space/v1/space_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { spaceContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261220000000_space } from "./db/migrations/Migration20261220000000_space.js";
import { contentHandlers } from "./handlers/content.js";
import { feedHandlers } from "./handlers/feeds.js";
import { internalHandlers } from "./handlers/internal.js";
import { postHandlers } from "./handlers/posts.js";
import { adminHandlers, spaceHandlers } from "./handlers/spaces.js";
import { threadHandlers } from "./handlers/threads.js";
import { voteHandlers } from "./handlers/votes.js";
import { seedSpaces } from "./workers/seed.js";

/** The forum service (spec part 2): spaces, threads, posts, votes and RSS feeds, with community's forwarded writes. */
export const space = defineService({
  key: "space",
  schema: {
    entities,
    migrations: [{ name: "Migration20261220000000_space", class: Migration20261220000000_space }],
  },
  context: spaceContext,
  protos: [SpaceService, SpaceInternalService, SpaceAdminService, SpaceContentService],
  implementations(ctx) {
    return [
      implement(SpaceService, {
        ...spaceHandlers(ctx),
        ...threadHandlers(ctx),
        ...postHandlers(ctx),
        ...voteHandlers(ctx),
        ...feedHandlers(ctx),
      }),
      implement(SpaceInternalService, internalHandlers(ctx)),
      implement(SpaceAdminService, adminHandlers(ctx)),
      implement(SpaceContentService, contentHandlers(ctx)),
    ];
  },
  // The members-only gate (vip's entitlement check, as itself) and network's staff list for a person's own token.
  holds: ["vip.entitlement.check", "network.staff.read"],
  workers: [seedSpaces],
});
