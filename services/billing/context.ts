import type { ServiceContext } from "../kit/module.js";
import type { ProviderRegistry } from "./provider/provider.js";
import type { BillingSettings } from "./settings.js";

/** Built once per billing instance: the service context, billing's settings and its payment providers. */
export interface BillingContext extends ServiceContext {
  settings: BillingSettings;
  providers: ProviderRegistry;
}
