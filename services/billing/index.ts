import { BillingAdminService } from "../../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { BillingUsageService } from "../../gen/pf/billing/v1/usage_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { billingContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261122100000_billing } from "./db/migrations/Migration20261122100000_billing.js";
import { Migration20261124000000_tip_intents } from "./db/migrations/Migration20261124000000_tip_intents.js";
import { Migration20261125000000_network_revenue } from "./db/migrations/Migration20261125000000_network_revenue.js";
import { Migration20261127000000_test_provider_orders } from "./db/migrations/Migration20261127000000_test_provider_orders.js";
import { Migration20261128100000_ledger_batch } from "./db/migrations/Migration20261128100000_ledger_batch.js";
import { Migration20261220000000_usage_records } from "./db/migrations/Migration20261220000000_usage_records.js";
import { adjustmentHandlers } from "./handlers/admin/adjustments.js";
import { freezeHandlers } from "./handlers/admin/freeze.js";
import { importHoldHandlers } from "./handlers/admin/import-holds.js";
import { providerEventHandlers } from "./handlers/admin/provider-events.js";
import { reconciliationHandlers } from "./handlers/admin/reconciliation.js";
import { settleHandlers } from "./handlers/admin/settle.js";
import { sweepHandlers } from "./handlers/admin/sweep.js";
import { balanceHandlers } from "./handlers/balances.js";
import { cashoutHandlers } from "./handlers/cashouts.js";
import { intentHandlers } from "./handlers/intents.js";
import { subscriptionHandlers } from "./handlers/subscriptions.js";
import { transferHandlers } from "./handlers/transfers.js";
import { usageHandlers } from "./handlers/usage.js";
import { webhookHandlers } from "./handlers/webhooks.js";
import { providerEvents } from "./workers/provider-events.js";
import { renewals } from "./workers/renewals.js";
import { testProviderAuto } from "./workers/test-provider-auto.js";

/** The billing service (spec part 1): the platform's only holder of money. */
export const billing = defineService({
  key: "billing",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261122100000_billing", class: Migration20261122100000_billing },
      { name: "Migration20261124000000_tip_intents", class: Migration20261124000000_tip_intents },
      { name: "Migration20261125000000_network_revenue", class: Migration20261125000000_network_revenue },
      { name: "Migration20261127000000_test_provider_orders", class: Migration20261127000000_test_provider_orders },
      { name: "Migration20261128100000_ledger_batch", class: Migration20261128100000_ledger_batch },
      { name: "Migration20261220000000_usage_records", class: Migration20261220000000_usage_records },
    ],
  },
  context: billingContext,
  protos: [BillingService, BillingAdminService, BillingUsageService],
  implementations(ctx) {
    return [
      implement(BillingService, {
        ...transferHandlers(ctx),
        ...balanceHandlers(ctx),
        ...intentHandlers(ctx),
        ...webhookHandlers(ctx),
        ...cashoutHandlers(ctx),
        ...subscriptionHandlers(ctx),
      }),
      implement(BillingAdminService, {
        ...adjustmentHandlers(ctx),
        ...freezeHandlers(ctx),
        ...importHoldHandlers(ctx),
        ...providerEventHandlers(ctx),
        ...reconciliationHandlers(ctx),
        ...sweepHandlers(ctx),
        ...settleHandlers(ctx),
      }),
      implement(BillingUsageService, usageHandlers(ctx)),
    ];
  },
  workers: [renewals, providerEvents, testProviderAuto],
});
