import { NewsAdminService } from "../../gen/pf/news/v1/admin_pb.js";
import { NewsClusterService } from "../../gen/pf/news/v1/clusters_pb.js";
import { NewsContentService } from "../../gen/pf/news/v1/content_pb.js";
import { NewsSourcingService } from "../../gen/pf/news/v1/sourcing_pb.js";
import { NewsStoryService } from "../../gen/pf/news/v1/stories_pb.js";
import { editorRelation } from "../kit/editors/editors.js";
import { editorHandlers } from "../kit/editors/handlers.js";
import { baseContext, defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";
import { aiDrafts } from "./consumers/ai-drafts.js";
import { itemConsumers } from "./consumers/items.js";
import { entities } from "./db/entities.js";
import { Migration20261227000000_news } from "./db/migrations/Migration20261227000000_news.js";
import { storyDocuments } from "./db/search.js";
import { clusterHandlers } from "./handlers/clusters.js";
import { contentHandlers } from "./handlers/content.js";
import { publishHandlers } from "./handlers/publish.js";
import { revisionHandlers } from "./handlers/revisions.js";
import { sourcingHandlers } from "./handlers/sourcing.js";
import { storyHandlers } from "./handlers/stories.js";

/** The news service (spec part 2): clusters of sources items, stories with revisions, publication, retraction. */
export const news = defineService({
  key: "news",
  schema: {
    entities,
    migrations: [{ name: "Migration20261227000000_news", class: Migration20261227000000_news }],
  },
  context: baseContext,
  protos: [NewsClusterService, NewsStoryService, NewsSourcingService, NewsAdminService, NewsContentService],
  implementations(ctx) {
    return [
      implement(NewsClusterService, clusterHandlers(ctx)),
      implement(NewsStoryService, { ...storyHandlers(ctx), ...revisionHandlers(ctx), ...publishHandlers(ctx) }),
      implement(NewsSourcingService, sourcingHandlers(ctx)),
      implement(NewsAdminService, editorHandlers(ctx)),
      implement(NewsContentService, contentHandlers(ctx)),
    ];
  },
  // ai.run.create: its own AI drafts (consumers/ai-drafts.ts); ai.run.read: verifies the run AI output names.
  holds: [SEARCH_DOCUMENT_WRITE, "ai.run.create", "ai.run.read"],
  workers: [...searchDocumentWorkers({ sources: [storyDocuments] })],
  consumers: [...itemConsumers, aiDrafts],
  relations: { editor: editorRelation },
});
