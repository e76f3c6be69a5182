import { LiveService } from "../../gen/pf/live/v1/live_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";
import { defineService } from "../kit/service/module.js";
import { sessionConsumers } from "./consumers/sessions.js";
import { subjectsConsumer } from "./consumers/subjects.js";
import { liveContext, type LiveContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261220000000_live } from "./db/migrations/Migration20261220000000_live.js";
import { channelDocuments } from "./db/search.js";
import { channelHandlers } from "./handlers/channels.js";
import { curationHandlers } from "./handlers/curation.js";
import { discoveryHandlers } from "./handlers/discovery.js";
import { listingHandlers } from "./handlers/listings.js";
import { statsHandlers } from "./handlers/stats.js";
import { streamHandlers } from "./handlers/streams.js";
import { statsRollUp } from "./workers/stats.js";
import { viewerFlush } from "./workers/viewers.js";

/**
 * The live-streaming read service (spec part 2): channel pages by username, who is live with playback endpoints,
 * discovery and stats, fed by restream's session events and network's handles.
 */
export const live = defineService({
  key: "live",
  schema: {
    entities,
    migrations: [{ name: "Migration20261220000000_live", class: Migration20261220000000_live }],
  },
  context: liveContext,
  protos: [LiveService],
  implementations: (ctx) => [
    implement(LiveService, {
      ...channelHandlers(ctx),
      ...streamHandlers(ctx),
      ...discoveryHandlers(ctx),
      ...statsHandlers(ctx),
      ...listingHandlers(ctx),
      ...curationHandlers(ctx),
    }),
  ],
  consumers: [...sessionConsumers, subjectsConsumer],
  holds: [SEARCH_DOCUMENT_WRITE],
  workers: [viewerFlush, statsRollUp, ...searchDocumentWorkers<LiveContext>({ sources: [channelDocuments] })],
});
