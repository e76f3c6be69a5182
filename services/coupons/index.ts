import { CouponsService } from "../../gen/pf/coupons/v1/coupons_pb.js";
import { baseContext, defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { entities } from "./db/entities.js";
import { Migration20261123000000_coupons } from "./db/migrations/Migration20261123000000_coupons.js";
import { Migration20261126000000_coupon_codes } from "./db/migrations/Migration20261126000000_coupon_codes.js";
import { couponHandlers } from "./handlers/coupons.js";
import { lookupHandlers } from "./handlers/lookups.js";
import { merchantHandlers } from "./handlers/merchants.js";
import { reportHandlers } from "./handlers/reports.js";
import { couponDocuments } from "./db/search.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";

/** The coupons service (spec part 1): merchants with domain rules, codes with status and confidence, reports, moderation. */
export const coupons = defineService({
  key: "coupons",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261123000000_coupons", class: Migration20261123000000_coupons },
      { name: "Migration20261126000000_coupon_codes", class: Migration20261126000000_coupon_codes },
    ],
  },
  context: baseContext,
  protos: [CouponsService],
  implementations(ctx) {
    return [
      implement(CouponsService, {
        ...lookupHandlers(ctx),
        ...reportHandlers(ctx),
        ...couponHandlers(ctx),
        ...merchantHandlers(ctx),
      }),
    ];
  },
  holds: [SEARCH_DOCUMENT_WRITE],
  workers: searchDocumentWorkers({ sources: [couponDocuments] }),
});
