import type { Client } from "@connectrpc/connect";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { ClientKeys } from "../kit/handler/client-address.js";
import type { ServiceContext } from "../kit/runtime/module.js";
import { tipsSettings, type TipsSettings } from "./settings.js";

/** Built once per tips instance by the host: the service context, the tips settings, the billing client and the client-address hasher. */
export interface TipsContext extends ServiceContext {
  settings: TipsSettings;
  /** Billing, called with the tips service's own token (billing.transfer.create, billing.intent.create). */
  billing: Client<typeof BillingService>;
  /** Keyed hashes of client addresses (open overlay streams per address); an address is never kept. */
  clientKeys: ClientKeys;
}

export async function tipsContext(base: ServiceContext): Promise<TipsContext> {
  return {
    ...base,
    settings: tipsSettings(base.config),
    billing: base.client(BillingService),
    clientKeys: await ClientKeys.load(base.config),
  };
}
