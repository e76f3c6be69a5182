import type { BillingSettings } from "../settings.js";
import type { ProviderRegistry } from "./provider.js";

// STUB: being written.
export function createProviders(settings: BillingSettings): ProviderRegistry {
  return {
    defaultProvider: settings.defaultProvider,
    get() {
      throw new Error("not yet");
    },
  };
}
