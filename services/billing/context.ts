import type { ServiceContext } from "../kit/service/module.js";
import { TransferBatch } from "./db/transfer-batch.js";
import type { ProviderRegistry } from "./provider/provider.js";
import { createProviders } from "./provider/registry.js";
import { billingSettings, type BillingSettings } from "./settings.js";

/** Built once per billing instance by the host: the service context, billing's settings and its payment providers. */
export interface BillingContext extends ServiceContext {
  settings: BillingSettings;
  providers: ProviderRegistry;
  /** The instance's transfer batch (db/transfer-batch.ts); undefined with PF_BILLING_BATCH=0, each transfer alone. */
  transfers?: TransferBatch;
}

export async function billingContext(base: ServiceContext): Promise<BillingContext> {
  const settings = billingSettings(base.config);
  const transfers = settings.batch > 0 ? new TransferBatch(base, settings.batch) : undefined;
  return { ...base, settings, providers: await createProviders(base, settings), transfers };
}
