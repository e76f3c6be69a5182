import type { Delivery, TestProvider } from "../../services/billing/provider/test.js";
import { secretKey } from "../../services/kit/runtime/sealer.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";
import { billingOf, person } from "./support.js";

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

/**
 * A credit purchase as the paying service sees it, with tokens for `token`
 * (billing.intent.create) and `reader` (billing.balance.read): a new pack
 * intent, an intent's status, a subject's spendable credit.
 */
export function purchases(t: TestPlatform, tokens: { token: () => string; reader: () => string }) {
  return {
    async newIntent(buyer = person()) {
      const answer = await t.http("POST", "/billing/api/v1/intents", {
        token: tokens.token(),
        body: packPurchase(buyer),
      });
      return { id: answer.body.intent.id as string, order: orderOf(answer), buyer };
    },
    async statusOf(id: string): Promise<string> {
      return (await t.http("GET", `/billing/api/v1/intents/${id}`, { token: tokens.token() })).body.intent.status;
    },
    async creditOf(subject: string): Promise<string> {
      const answer = await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: tokens.reader() });
      return answer.body.balances[0]?.spendable_credit ?? "0";
    },
  };
}
