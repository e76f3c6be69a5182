import type { ServiceModule } from "../kit/module.js";
import { entities } from "./db/entities.js";
import { Migration20261122100000_billing } from "./db/migrations/Migration20261122100000_billing.js";

/** The billing service (spec part 1): the platform's only holder of money. */
export const billing: ServiceModule = {
  key: "billing",
  schema: {
    entities,
    migrations: [{ name: "Migration20261122100000_billing", class: Migration20261122100000_billing }],
  },
  async implementations() {
    return [];
  },
};
