import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { implement, type ServiceModule } from "../kit/module.js";
import { Sealer } from "../kit/secrets.js";
import { entities } from "./db/entities.js";
import { Migration20261122000000_network } from "./db/migrations/Migration20261122000000_network.js";
import { adminHandlers } from "./handlers/admin.js";
import { blocksHandlers } from "./handlers/blocks.js";
import { coinsHandlers } from "./handlers/coins.js";
import { identityHandlers } from "./handlers/identity.js";
import { integrationHandlers } from "./handlers/integrations.js";
import { moduleHandlers } from "./handlers/modules.js";
import { notificationHandlers } from "./handlers/notifications.js";
import { StaffList, staffHandlers } from "./handlers/staff.js";

/** The network identity-and-coins service (spec part 1). */
export const network: ServiceModule = {
  key: "network",
  schema: {
    entities,
    migrations: [{ name: "Migration20261122000000_network", class: Migration20261122000000_network }],
  },
  async implementations(ctx) {
    const sealer = await Sealer.load(ctx.config);
    const staffList = new StaffList(ctx);
    return [
      implement(NetworkService, {
        ...staffHandlers(staffList),
        ...blocksHandlers(ctx),
        ...coinsHandlers(ctx),
        ...identityHandlers(ctx),
        ...integrationHandlers(ctx, sealer),
        ...moduleHandlers(ctx),
        ...notificationHandlers(ctx),
      }),
      implement(NetworkAdminService, adminHandlers(ctx, sealer, staffList)),
    ];
  },
};
