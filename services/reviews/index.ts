import { ReviewCorrectionsService } from "../../gen/pf/reviews/v1/corrections_pb.js";
import { ReviewsAdminService } from "../../gen/pf/reviews/v1/admin_pb.js";
import { ReviewsService } from "../../gen/pf/reviews/v1/entities_pb.js";
import { ReviewSignalsService } from "../../gen/pf/reviews/v1/signals_pb.js";
import { ReviewSummariesService } from "../../gen/pf/reviews/v1/summaries_pb.js";
import { editorRelation } from "../kit/editors/editors.js";
import { editorHandlers } from "../kit/editors/handlers.js";
import { baseContext, defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";
import { itemCreatedConsumer } from "./consumers/items.js";
import { entities } from "./db/entities.js";
import { Migration20261127000000_reviews } from "./db/migrations/Migration20261127000000_reviews.js";
import { Migration20261228000000_reviews_summary_contents } from "./db/migrations/Migration20261228000000_reviews_summary_contents.js";
import { entityDocuments } from "./db/search.js";
import { aliasHandlers } from "./handlers/aliases.js";
import { correctionHandlers } from "./handlers/corrections.js";
import { entityHandlers } from "./handlers/entities.js";
import { mergeHandlers } from "./handlers/merges.js";
import { signalHandlers } from "./handlers/signals.js";
import { summaryHandlers } from "./handlers/summaries.js";

/** The reviews service (spec part 2): entities, resolution, signals, aggregates, summaries, corrections, merge and split. */
export const reviews = defineService({
  key: "reviews",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261127000000_reviews", class: Migration20261127000000_reviews },
      {
        name: "Migration20261228000000_reviews_summary_contents",
        class: Migration20261228000000_reviews_summary_contents,
      },
    ],
  },
  context: baseContext,
  protos: [ReviewsService, ReviewSignalsService, ReviewSummariesService, ReviewCorrectionsService, ReviewsAdminService],
  implementations(ctx) {
    return [
      implement(ReviewsService, { ...entityHandlers(ctx), ...aliasHandlers(ctx), ...mergeHandlers(ctx) }),
      implement(ReviewSignalsService, signalHandlers(ctx)),
      implement(ReviewSummariesService, summaryHandlers(ctx)),
      implement(ReviewCorrectionsService, correctionHandlers(ctx)),
      implement(ReviewsAdminService, editorHandlers(ctx)),
    ];
  },
  holds: [SEARCH_DOCUMENT_WRITE, "ai.run.read"], // ai.run.read: verifies the run AI output names
  consumers: [itemCreatedConsumer],
  workers: [...searchDocumentWorkers({ sources: [entityDocuments] })],
  relations: { editor: editorRelation },
});
