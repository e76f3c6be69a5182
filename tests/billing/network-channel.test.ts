import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { payeeOf } from "../../services/billing/domain/ledger.js";
import { purchaseMovements } from "../../services/billing/domain/intents.js";
import { usePlatform } from "../support/platform.js";
import { deliver, orderOf, testProvider } from "./payments.js";
import { billingOf, fund, person } from "./support.js";

const clock = new ManualClock(new Date("2026-06-01T00:00:00Z"));
const t = usePlatform({ services: ["billing"], clock, env: { PF_BILLING_SWEEP_EVERY_MS: "2000000000" } });
const PERIOD_MS = 30 * 86_400_000;

let manager: string;
let checker: string;
let admin: string;
let buyer: string;

beforeAll(async () => {
  manager = await t.token({ kind: "service", svc: "vip", caps: ["billing.subscription.manage"] });
  checker = await t.token({ kind: "service", svc: "vip", caps: ["billing.entitlement.check"] });
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
  buyer = await t.token({ kind: "service", svc: "vip", caps: ["billing.intent.create"] });
});

/** The platform's revenue in USD, read from the ledger (0 before its first posting). */
async function revenue(): Promise<bigint> {
  const [row] = await billingOf(t)
    .orm.em.getConnection()
    .execute<{ balance: string }[]>(
      `select balance from billing.accounts where owner = 'platform' and kind = 'revenue' and currency = 'USD'`,
    );
  return BigInt(row?.balance ?? 0);
}

const reconciled = async () => {
  const answer = await t.http("GET", "/billing/api/v1/admin/reconcile", { token: admin });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.reconciliation;
};

describe("the network's own channel", () => {
  it("pays the platform's revenue, never a person's payable", () => {
    expect(payeeOf("network")).toEqual({ owner: "platform", kind: "revenue" });
    expect(payeeOf("usr_c1")).toEqual({ owner: "usr_c1", kind: "payable" });
    const purchase = {
      product: "channel_subscription",
      subject: "usr_a1",
      streamer: "network",
      currency: "USD",
      price: 499n,
      creditGranted: 0n,
    };
    expect(purchaseMovements(purchase, "test")).toEqual([
      { owner: "test", kind: "provider_clearing", currency: "USD", amount: -499n },
      { owner: "platform", kind: "revenue", currency: "USD", amount: 499n },
    ]);
  });

  it("is subscribed from credit into revenue, renews into revenue, and entitles; the ledger reconciles", async () => {
    const fan = person("fan");
    await fund(t, fan, 2_000n);
    const before = await revenue();
    const answer = await t.http("POST", "/billing/api/v1/subscriptions", {
      token: manager,
      body: { subject: fan, streamer: "network", plan_id: "pln_net", plan_version: 1, idempotency_key: `net-${fan}` },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.subscription).toMatchObject({
      subject: fan,
      streamer: "network",
      status: "SUBSCRIPTION_STATUS_ACTIVE",
      price: { minor_units: "499" },
    });
    expect(await revenue()).toBe(before + 499n);
    const entitled = await t.http("GET", `/billing/api/v1/entitlements/${fan}?streamer=network`, { token: checker });
    expect(entitled.body.entitlements).toEqual([expect.objectContaining({ streamer: "network", plan_id: "pln_net" })]);

    clock.advance(PERIOD_MS + 1000);
    expect((await t.http("POST", "/billing/api/v1/admin/sweep", { token: admin, body: {} })).status).toBe(200);
    expect(await revenue()).toBe(before + 998n);
    expect((await reconciled()).imbalances).toEqual([]);
  });

  it("is bought through an intent: the settled purchase books provider clearing → revenue", async () => {
    const fan = person("fan");
    const before = await revenue();
    const created = await t.http("POST", "/billing/api/v1/intents", {
      token: buyer,
      body: {
        subject: fan,
        channel_subscription: { streamer: "network", plan_id: "pln_net", plan_version: 1, tier: "tier_2" },
        idempotency_key: `i-${fan}`,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const provider = testProvider(t);
    const order = orderOf(created);
    await provider.approve(order);
    await provider.captureOrder(order);
    expect(
      (
        await deliver(
          t,
          (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!,
        )
      ).body.status,
    ).toBe("PROVIDER_EVENT_STATUS_APPLIED");
    expect(await revenue()).toBe(before + 999n);
    const entitled = await t.http("GET", `/billing/api/v1/entitlements/${fan}?streamer=network`, { token: checker });
    expect(entitled.body.entitlements).toEqual([expect.objectContaining({ streamer: "network", plan_version: "1" })]);
    expect((await reconciled()).imbalances).toEqual([]);
  });

  it("is the only channel that is not a usr_ subject (400 naming the field)", async () => {
    const answer = await t.http("POST", "/billing/api/v1/subscriptions", {
      token: manager,
      body: {
        subject: person("fan"),
        streamer: "platform",
        plan_id: "pln_net",
        plan_version: 1,
        idempotency_key: "bad",
      },
    });
    expect(answer.body).toMatchObject({ status: 400, field: "streamer" });
  });
});
