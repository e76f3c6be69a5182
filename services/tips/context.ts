import type { Client } from "@connectrpc/connect";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { tipsSettings, type TipsSettings } from "./settings.js";

/** Built once per tips instance by the host: the service context, the tips settings, and the billing client. */
export interface TipsContext extends ServiceContext {
  settings: TipsSettings;
  /** Billing, called with the tips service's own token (billing.transfer.create, billing.intent.create). */
  billing: Client<typeof BillingService>;
}

export function tipsContext(base: ServiceContext): TipsContext {
  return {
    ...base,
    settings: tipsSettings(base.config),
    billing: base.client(BillingService),
  };
}
