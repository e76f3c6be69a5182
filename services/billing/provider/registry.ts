import type { ServiceContext } from "../../kit/service/module.js";
import { secretKey } from "../../kit/runtime/sealer.js";
import { problem } from "../../kit/handler/problem.js";
import type { BillingSettings } from "../settings.js";
import type { PaymentProvider, ProviderRegistry } from "./provider.js";
import { TEST_PROVIDER, TestProvider } from "./test.js";

/**
 * The providers of one billing instance: the test-mode provider, the only one
 * built in, and only where the operator chose it (PF_BILLING_TEST_PROVIDER=on).
 */
export async function createProviders(ctx: ServiceContext, settings: BillingSettings): Promise<ProviderRegistry> {
  const providers = new Map<string, PaymentProvider>();
  if (settings.testProvider) providers.set(TEST_PROVIDER, await testProvider(ctx, settings));
  return {
    defaultProvider: settings.defaultProvider,
    get(name) {
      const found = providers.get(name);
      if (!found) {
        const detail =
          name === TEST_PROVIDER
            ? "The test-mode provider is not enabled here (PF_BILLING_TEST_PROVIDER=on enables it, outside production)."
            : `Billing has no payment provider ${JSON.stringify(name)}.`;
        throw problem(404, "provider.unknown", detail, { providers: [...providers.keys()] });
      }
      return found;
    },
  };
}

async function testProvider(ctx: ServiceContext, settings: BillingSettings): Promise<TestProvider> {
  ctx.logger.warn(
    { provider: TEST_PROVIDER },
    "TEST-MODE PAYMENTS ARE ON (PF_BILLING_TEST_PROVIDER=on): the test provider settles payments nobody made. " +
      "Never use it where money is real.",
  );
  return new TestProvider({
    // Unset, a secret made for this installation and kept under <data>/keys/, like the signing key.
    secret: await secretKey(ctx.config, "PF_BILLING_TEST_PROVIDER_SECRET", "billing-test-provider.key"),
    checkoutUrl: settings.testCheckoutUrl,
    clock: ctx.clock,
    transaction: (work) => ctx.transaction(work),
    auto: settings.testProviderAuto === "approve",
  });
}
