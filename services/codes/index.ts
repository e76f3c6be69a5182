import { CodesService } from "../../gen/pf/codes/v1/codes_pb.js";
import { baseContext, defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { entities } from "./db/entities.js";
import { Migration20261215000000_codes } from "./db/migrations/Migration20261215000000_codes.js";
import { manageHandlers } from "./handlers/manage.js";
import { readHandlers } from "./handlers/reads.js";
import { trustHandlers } from "./handlers/trust.js";

/** The release-metadata service (spec part 3): apps' and mods' releases, and the apps' trust tiers. */
export const codes = defineService({
  key: "codes",
  schema: {
    entities,
    migrations: [{ name: "Migration20261215000000_codes", class: Migration20261215000000_codes }],
  },
  context: baseContext,
  protos: [CodesService],
  implementations: (ctx) => [
    implement(CodesService, { ...readHandlers(ctx), ...manageHandlers(ctx), ...trustHandlers(ctx) }),
  ],
});
