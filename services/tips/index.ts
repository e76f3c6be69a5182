import { TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
import { TipsOwnerService } from "../../gen/pf/tips/v1/owners_pb.js";
import { TipsService } from "../../gen/pf/tips/v1/tips_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { consumers } from "./consumers/intents.js";
import { tipsContext, type TipsContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261122200000_tips_overlays } from "./db/migrations/Migration20261122200000_tips_overlays.js";
import { Migration20261124100000_tips } from "./db/migrations/Migration20261124100000_tips.js";
import { Migration20261125100000_tips_checkout_keys } from "./db/migrations/Migration20261125100000_tips_checkout_keys.js";
import { overlayEntities } from "./db/overlay-entities.js";
import { checkoutHandlers } from "./handlers/checkouts.js";
import { goalHandlers } from "./handlers/goals.js";
import { interactionHandlers } from "./handlers/interactions.js";
import { moderationHandlers } from "./handlers/moderation.js";
import { overlayConsumers } from "./consumers/overlay-alerts.js";
import { overlayHandlers } from "./handlers/overlay-service.js";
import { ownerHandlers } from "./handlers/owners.js";
import { profileHandlers } from "./handlers/profiles.js";
import { recovery } from "./workers/recovery.js";
import { tipPageDocuments } from "./db/search.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";

/**
 * The tips service (spec part 1): tips, paid messages, media requests, goals,
 * interactions and their moderation, creator tip profiles, overlay configs,
 * overlay tokens and overlay streams. It never prices money; billing does.
 */
export const tips = defineService({
  key: "tips",
  schema: {
    // Payments side (db/entities.ts) and overlays side (db/overlay-entities.ts).
    entities: [...entities, ...overlayEntities],
    migrations: [
      { name: "Migration20261124100000_tips", class: Migration20261124100000_tips },
      { name: "Migration20261122200000_tips_overlays", class: Migration20261122200000_tips_overlays },
      { name: "Migration20261125100000_tips_checkout_keys", class: Migration20261125100000_tips_checkout_keys },
    ],
  },
  context: tipsContext,
  protos: [TipsService, TipsOverlayService, TipsOwnerService],
  implementations(ctx) {
    return [
      implement(TipsService, {
        ...checkoutHandlers(ctx),
        ...goalHandlers(ctx),
        ...interactionHandlers(ctx),
        ...moderationHandlers(ctx),
        ...profileHandlers(ctx),
      }),
      implement(TipsOverlayService, overlayHandlers(ctx)),
      implement(TipsOwnerService, ownerHandlers(ctx)),
    ];
  },
  holds: ["billing.transfer.create", "billing.intent.create", SEARCH_DOCUMENT_WRITE],
  consumers: [...consumers, ...overlayConsumers],
  workers: [recovery, ...searchDocumentWorkers<TipsContext>({ sources: [tipPageDocuments] })],
});
