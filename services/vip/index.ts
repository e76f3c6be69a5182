import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { entitlementsConsumer } from "./consumers/entitlements.js";
import { vipContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261124000000_vip } from "./db/migrations/Migration20261124000000_vip.js";
import { checkoutHandlers } from "./handlers/checkout.js";
import { entitlementHandlers } from "./handlers/entitlements.js";
import { memberHandlers } from "./handlers/members.js";
import { membershipHandlers } from "./handlers/memberships.js";
import { perkHandlers } from "./handlers/perks.js";
import { planReadHandlers } from "./handlers/plan-reads.js";
import { planHandlers } from "./handlers/plans.js";
import { policyHandlers } from "./handlers/policies.js";

/**
 * The membership service (spec part 1): plans with immutable versions, perks,
 * checkout through billing, entitlements, resource policies.
 */
export const vip = defineService({
  key: "vip",
  schema: {
    entities,
    migrations: [{ name: "Migration20261124000000_vip", class: Migration20261124000000_vip }],
  },
  context: vipContext,
  protos: [VipService],
  implementations(ctx) {
    return [
      implement(VipService, {
        ...planReadHandlers(ctx),
        ...planHandlers(ctx),
        ...perkHandlers(ctx),
        ...checkoutHandlers(ctx),
        ...membershipHandlers(ctx),
        ...memberHandlers(ctx),
        ...entitlementHandlers(ctx),
        ...policyHandlers(ctx),
      }),
    ];
  },
  // Its token's capabilities: at billing checkout (intents, subscriptions from credit) and entitlement reads; at
  // tips who owns a goal or profile a rule gates.
  holds: ["billing.intent.create", "billing.subscription.manage", "billing.entitlement.check", "tips.owner.resolve"],
  consumers: [entitlementsConsumer],
});
