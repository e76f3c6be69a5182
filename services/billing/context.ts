import type { ServiceContext } from "../kit/module.js";
import type { ProviderRegistry } from "./provider/provider.js";
import { createProviders } from "./provider/registry.js";
import { billingSettings, type BillingSettings } from "./settings.js";

/** Built once per billing instance: the service context, billing's settings and its payment providers. */
export interface BillingContext extends ServiceContext {
  settings: BillingSettings;
  providers: ProviderRegistry;
}

const built = new WeakMap<ServiceContext, BillingContext>();

/** The billing context of a service context: handlers and workers of one instance share it. */
export function billingContext(ctx: ServiceContext): BillingContext {
  let found = built.get(ctx);
  if (!found) {
    const settings = billingSettings(ctx.config);
    found = { ...ctx, settings, providers: createProviders(ctx, settings) };
    built.set(ctx, found);
  }
  return found;
}
