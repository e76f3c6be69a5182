import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { dealsContext, type DealsContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261123000000_deals } from "./db/migrations/Migration20261123000000_deals.js";
import { flagHandlers } from "./handlers/flags.js";
import { mergeHandlers } from "./handlers/merges.js";
import { moderationHandlers } from "./handlers/moderation.js";
import { offerHandlers } from "./handlers/offers.js";
import { productHandlers } from "./handlers/products.js";
import { voteHandlers } from "./handlers/votes.js";
import { watchHandlers } from "./handlers/watches.js";
import { expiry } from "./workers/expiry.js";
import { offerDocuments } from "./db/search.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";

/** The deals service (spec part 1): offers, observations, votes, flags, merging, products, watches, moderation. */
export const deals = defineService({
  key: "deals",
  schema: {
    entities,
    migrations: [{ name: "Migration20261123000000_deals", class: Migration20261123000000_deals }],
  },
  context: dealsContext,
  protos: [DealsService],
  implementations(ctx) {
    return [
      implement(DealsService, {
        ...offerHandlers(ctx),
        ...moderationHandlers(ctx),
        ...flagHandlers(ctx),
        ...mergeHandlers(ctx),
        ...voteHandlers(ctx),
        ...productHandlers(ctx),
        ...watchHandlers(ctx),
      }),
    ];
  },
  holds: [SEARCH_DOCUMENT_WRITE],
  workers: [expiry, ...searchDocumentWorkers<DealsContext>({ sources: [offerDocuments] })],
});
