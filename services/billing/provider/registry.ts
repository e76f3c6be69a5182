import { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { ProviderEventStatus } from "../../../gen/pf/billing/v1/intents_pb.js";
import { outsideCall } from "../../kit/rpc/call.js";
import type { ServiceContext } from "../../kit/runtime/module.js";
import { problem } from "../../kit/handler/problem.js";
import type { BillingSettings } from "../settings.js";
import type { PaymentProvider, ProviderRegistry } from "./provider.js";
import { TestProvider, type Delivery } from "./test.js";

/** The providers of one billing instance: the test-mode provider, the only one built in. */
export function createProviders(ctx: ServiceContext, settings: BillingSettings): ProviderRegistry {
  const test: TestProvider = new TestProvider({
    secret: settings.testProviderSecret,
    checkoutUrl: settings.testCheckoutUrl,
    clock: ctx.clock,
    autoApprove:
      settings.testProviderAuto === "approve" ? (delivery) => deliverToBilling(ctx, test, delivery) : undefined,
  });
  const providers = new Map<string, PaymentProvider>([[test.name, test]]);
  return {
    defaultProvider: settings.defaultProvider,
    get(name) {
      const found = providers.get(name);
      if (!found) {
        throw problem(404, "provider.unknown", `Billing has no payment provider ${JSON.stringify(name)}.`, {
          providers: [...providers.keys()],
        });
      }
      return found;
    },
  };
}

const AUTO_ATTEMPTS = 3;

/**
 * Auto mode's delivery: through billing's own webhook RPC, signed like any
 * other. An approval that arrives before billing wrote its intent is ignored
 * (unknown order), so the provider approves again, as a new event, a little later.
 */
async function deliverToBilling(ctx: ServiceContext, provider: TestProvider, delivery: Delivery): Promise<void> {
  const client = ctx.client(BillingService);
  try {
    for (let attempt = 1; ; attempt++) {
      const answer = await outsideCall(() =>
        client.receiveProviderWebhook(
          { provider: provider.name, payload: Buffer.from(delivery.body) },
          { headers: { ...delivery.headers } },
        ),
      );
      if (answer.status !== ProviderEventStatus.IGNORED || attempt === AUTO_ATTEMPTS) return;
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      delivery = provider.approve(delivery.orderId);
    }
  } catch (error) {
    ctx.logger.warn(
      { err: error, order: delivery.orderId },
      "test provider auto mode: the approval webhook was not delivered",
    );
  }
}
