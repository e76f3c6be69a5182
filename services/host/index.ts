import { HostService } from "../../gen/pf/host/v1/host_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { defineService } from "../kit/service/module.js";
import { hostContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20270110000000_host } from "./db/migrations/Migration20270110000000_host.js";
import { deployHandlers } from "./handlers/deploys.js";
import { domainHandlers } from "./handlers/domains.js";
import { memberHandlers } from "./handlers/members.js";
import { projectHandlers } from "./handlers/projects.js";
import { quotaHandlers } from "./handlers/quota.js";
import { siteHandlers } from "./handlers/sites.js";
import { takedownHandlers } from "./handlers/takedowns.js";
import { hostRelations } from "./roles.js";
import { reverify } from "./workers/reverify.js";
import { serving } from "./workers/serving.js";
import { sweep } from "./workers/sweep.js";

/**
 * The static-hosting service (spec part 3): tenant projects and their members, sites, immutable deploys validated
 * as they stream in, activation as one pointer switch, verified custom domains, quotas and takedowns by network
 * staff, and the sites served on a listener of their own.
 */
export const host = defineService({
  key: "host",
  schema: {
    entities,
    migrations: [{ name: "Migration20270110000000_host", class: Migration20270110000000_host }],
  },
  context: hostContext,
  protos: [HostService],
  implementations(ctx) {
    return [
      implement(HostService, {
        ...projectHandlers(ctx),
        ...memberHandlers(ctx),
        ...quotaHandlers(ctx),
        ...siteHandlers(ctx),
        ...takedownHandlers(ctx),
        ...deployHandlers(ctx),
        ...domainHandlers(ctx),
      }),
    ];
  },
  // The caller's role in a project (owner, deployer, viewer) and network's staff list.
  relations: hostRelations,
  // Its token's capability: network's staff list, which the `network_staff` resolver reads.
  holds: ["network.staff.read"],
  workers: [serving, reverify, sweep],
});
