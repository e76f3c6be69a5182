import { MediaService } from "../../gen/pf/media/v1/media_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { mediaContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261215000000_media } from "./db/migrations/Migration20261215000000_media.js";
import { Migration20261216000000_media_quotas } from "./db/migrations/Migration20261216000000_media_quotas.js";
import { Migration20261217000000_media_kit_quotas } from "./db/migrations/Migration20261217000000_media_kit_quotas.js";
import { readHandlers } from "./handlers/reads.js";
import { uploadHandlers } from "./handlers/uploads.js";
import { sweep } from "./workers/sweep.js";

/** The media-object service (spec part 3): file objects in app namespaces, their bytes in the blob store. */
export const media = defineService({
  key: "media",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261215000000_media", class: Migration20261215000000_media },
      { name: "Migration20261216000000_media_quotas", class: Migration20261216000000_media_quotas },
      { name: "Migration20261217000000_media_kit_quotas", class: Migration20261217000000_media_kit_quotas },
    ],
  },
  context: mediaContext,
  protos: [MediaService],
  implementations: (ctx) => [implement(MediaService, { ...uploadHandlers(ctx), ...readHandlers(ctx) })],
  workers: [sweep],
});
