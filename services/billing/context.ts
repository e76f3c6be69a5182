import type { ServiceContext } from "../kit/runtime/module.js";
import type { ProviderRegistry } from "./provider/provider.js";
import { createProviders } from "./provider/registry.js";
import { billingSettings, type BillingSettings } from "./settings.js";

/** Built once per billing instance by the host: the service context, billing's settings and its payment providers. */
export interface BillingContext extends ServiceContext {
  settings: BillingSettings;
  providers: ProviderRegistry;
}

export async function billingContext(base: ServiceContext): Promise<BillingContext> {
  const settings = billingSettings(base.config);
  return { ...base, settings, providers: await createProviders(base, settings) };
}
