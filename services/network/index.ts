import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { networkContext } from "./context.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { entities } from "./db/entities.js";
import { Migration20261122000000_network } from "./db/migrations/Migration20261122000000_network.js";
import { adminHandlers } from "./handlers/admin.js";
import { blocksHandlers } from "./handlers/blocks.js";
import { coinsHandlers } from "./handlers/coins.js";
import { identityHandlers } from "./handlers/identity.js";
import { integrationHandlers } from "./handlers/integrations.js";
import { moduleHandlers } from "./handlers/modules.js";
import { notificationHandlers } from "./handlers/notifications.js";
import { staffHandlers } from "./handlers/staff.js";
import { ownerRelation } from "./owner.js";

/** The network identity-and-coins service (spec part 1). */
export const network = defineService({
  key: "network",
  schema: {
    entities,
    migrations: [{ name: "Migration20261122000000_network", class: Migration20261122000000_network }],
  },
  context: networkContext,
  protos: [NetworkService, NetworkAdminService],
  relations: ownerRelation,
  implementations(ctx) {
    return [
      implement(NetworkService, {
        ...staffHandlers(ctx),
        ...blocksHandlers(ctx),
        ...coinsHandlers(ctx),
        ...identityHandlers(ctx),
        ...integrationHandlers(ctx),
        ...moduleHandlers(ctx),
        ...notificationHandlers(ctx),
      }),
      implement(NetworkAdminService, adminHandlers(ctx)),
    ];
  },
});
