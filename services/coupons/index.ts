import { CouponsService } from "../../gen/pf/coupons/v1/coupons_pb.js";
import { ClientKeys } from "../kit/client-keys.js";
import { implement, type ServiceModule } from "../kit/module.js";
import { entities } from "./db/entities.js";
import { Migration20261123000000_coupons } from "./db/migrations/Migration20261123000000_coupons.js";
import { couponHandlers } from "./handlers/coupons.js";
import { lookupHandlers } from "./handlers/lookups.js";
import { merchantHandlers } from "./handlers/merchants.js";
import { reportHandlers } from "./handlers/reports.js";

/** The coupons service (spec part 1): merchants with domain rules, codes with status and confidence, reports, moderation. */
export const coupons: ServiceModule = {
  key: "coupons",
  schema: {
    entities,
    migrations: [{ name: "Migration20261123000000_coupons", class: Migration20261123000000_coupons }],
  },
  async implementations(ctx) {
    const clientKeys = await ClientKeys.load(ctx.config);
    return [
      implement(CouponsService, {
        ...lookupHandlers(ctx, clientKeys),
        ...reportHandlers(ctx),
        ...couponHandlers(ctx),
        ...merchantHandlers(ctx),
      }),
    ];
  },
};
