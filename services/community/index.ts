import { CommentService } from "../../gen/pf/community/v1/comments_pb.js";
import { ForumService } from "../../gen/pf/community/v1/forum_pb.js";
import { ModerationService } from "../../gen/pf/community/v1/moderation_pb.js";
import { PasteService } from "../../gen/pf/community/v1/pastes_pb.js";
import { PulseService } from "../../gen/pf/community/v1/pulse_pb.js";
import { RelayService } from "../../gen/pf/community/v1/relays_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { forumModeration } from "./consumers/forum-moderation.js";
import { communityContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261127000000_community } from "./db/migrations/Migration20261127000000_community.js";
import { commentHandlers } from "./handlers/comments.js";
import { forumHandlers } from "./handlers/forum.js";
import { moderationHandlers } from "./handlers/moderation.js";
import { pasteReactionHandlers } from "./handlers/paste-reactions.js";
import { pasteReadHandlers } from "./handlers/paste-reads.js";
import { pasteHandlers } from "./handlers/pastes.js";
import { pulseHandlers } from "./handlers/pulse.js";
import { relayHandlers } from "./handlers/relays.js";

/** The community service (spec part 2): pastes, comment threads, moderation, pulse, and forum writes forwarded to space. */
export const community = defineService({
  key: "community",
  schema: {
    entities,
    migrations: [{ name: "Migration20261127000000_community", class: Migration20261127000000_community }],
  },
  context: communityContext,
  protos: [PasteService, CommentService, ModerationService, ForumService, PulseService, RelayService],
  implementations: (ctx) => [
    implement(PasteService, { ...pasteHandlers(ctx), ...pasteReactionHandlers(ctx), ...pasteReadHandlers(ctx) }),
    implement(CommentService, commentHandlers(ctx)),
    implement(ModerationService, moderationHandlers(ctx)),
    implement(ForumService, forumHandlers(ctx)),
    implement(PulseService, pulseHandlers(ctx)),
    implement(RelayService, relayHandlers(ctx)),
  ],
  // Space's internal RPC: forum writes (space.post.write) and moderation (space.post.moderate); the content
  // gates of comment threads (contents.ts): each owner's CheckContentAccess.
  holds: [
    "space.post.write",
    "space.post.moderate",
    "blog.content.check",
    "news.content.check",
    "space.content.check",
    "ai.run.read",
  ],
  consumers: [forumModeration],
});
