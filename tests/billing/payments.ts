import type { Delivery, TestProvider } from "../../services/billing/provider/test.js";
import { secretKey } from "../../services/kit/runtime/sealer.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";
import { billingOf } from "./support.js";

/** The instance's test-mode provider, which tests drive as the buyer and the provider would. */
export const testProvider = (t: TestPlatform) => billingOf(t).providers.get("test") as TestProvider;

/** The secret this installation's test-mode provider signs with: made on first start under <data>/keys/. */
export const installationSecret = (t: TestPlatform) =>
  secretKey(billingOf(t).config, "PF_BILLING_TEST_PROVIDER_SECRET", "billing-test-provider.key");

/** Sends a provider's signed webhook delivery to billing over real HTTP, as the provider would (no token). */
export function deliver(
  t: TestPlatform,
  delivery: Delivery,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return t.http("POST", "/billing/api/v1/webhooks/test", {
    body: delivery.body,
    headers: { ...delivery.headers, ...headers },
  });
}

/** A web-checkout credit purchase of a catalogue pack. */
export const packPurchase = (subject: string, pack = "credits_500") => ({ subject, credit: { pack } });

/** The intent's order at the test provider. */
export const orderOf = (answer: HttpAnswer): string => answer.body.intent.provider_order_id;
