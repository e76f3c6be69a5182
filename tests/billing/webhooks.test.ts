import { beforeAll, describe, expect, it } from "vitest";
import { applyProviderEvents } from "../../services/billing/workers/provider-events.js";
import { signDelivery } from "../../services/billing/provider/standard-webhooks.js";
import { usePlatform } from "../support/platform.js";
import { setFrozen } from "./checks.js";
import { deliver, installationSecret, packPurchase, purchases, testProvider } from "./payments.js";
import { billingOf, person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let tips: string;
let reader: string;

beforeAll(async () => {
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

const { newIntent, statusOf, creditOf } = purchases(t, { token: () => tips, reader: () => reader });

describe("webhook signatures", () => {
  it("are the only credential: a signed delivery without a token is taken", async () => {
    const { order } = await newIntent();
    const answer = await deliver(t, await testProvider(t).approve(order));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "PROVIDER_EVENT_STATUS_APPLIED", duplicate: false });
    expect(answer.body.event_id).toMatch(/^pev_/);
  });

  it("refuses a tampered body, a wrong or missing signature and an old timestamp (401 webhook.signature_invalid)", async () => {
    const { id, order } = await newIntent();
    const provider = testProvider(t);
    const delivery = await provider.approve(order);
    const tampered = { ...delivery, body: delivery.body.replace("order.approved", "order.declined") };
    const other = signDelivery("whsec_someone_else", delivery.id, Buffer.from(delivery.body), new Date());
    const old = provider.resign(delivery, new Date(Date.now() - 6 * 60_000));
    for (const answer of [
      await deliver(t, tampered),
      await deliver(t, delivery, { "webhook-signature": other["webhook-signature"] }),
      await t.http("POST", "/billing/api/v1/webhooks/test", { body: delivery.body }),
      await deliver(t, old),
    ]) {
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe("webhook.signature_invalid");
    }
    expect(await statusOf(id)).toBe("INTENT_STATUS_REQUIRES_ACTION");
  });

  it("takes the raw bytes whatever the content type, and answers 404 provider.unknown for a provider billing lacks", async () => {
    const { order } = await newIntent();
    const delivery = await testProvider(t).approve(order);
    const plain = await deliver(t, delivery, { "content-type": "text/plain; charset=utf-8" });
    expect(plain.body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");
    const unknown = await t.http("POST", "/billing/api/v1/webhooks/nope", {
      body: delivery.body,
      headers: { ...delivery.headers },
    });
    expect(unknown.body).toMatchObject({ status: 404, code: "provider.unknown" });
  });

  it("refuses a signed body that is not a provider event (400 webhook.payload_invalid)", async () => {
    const body = JSON.stringify({ hello: "world" });
    const headers = signDelivery(await installationSecret(t), "tevt_odd", Buffer.from(body), new Date());
    const answer = await t.http("POST", "/billing/api/v1/webhooks/test", { body, headers: { ...headers } });
    expect(answer.body).toMatchObject({ status: 400, code: "webhook.payload_invalid" });
  });
});

describe("applying provider events", () => {
  it("applies a duplicate delivery once", async () => {
    const { id, order, buyer } = await newIntent();
    const provider = testProvider(t);
    await provider.approve(order);
    await provider.captureOrder(order);
    const captured = (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!;
    const first = await deliver(t, captured);
    const again = await deliver(t, provider.resign(captured, new Date()));
    expect(first.body).toMatchObject({ status: "PROVIDER_EVENT_STATUS_APPLIED", duplicate: false });
    expect(again.body).toMatchObject({
      event_id: first.body.event_id,
      status: "PROVIDER_EVENT_STATUS_APPLIED",
      duplicate: true,
    });
    expect(await statusOf(id)).toBe("INTENT_STATUS_SETTLED");
    expect(await creditOf(buyer)).toBe("500");
    const [row] = await billingOf(t)
      .orm.em.getConnection()
      .execute(`select deliveries from billing.provider_events where id = ?`, [first.body.event_id]);
    expect(row.deliveries).toBe(2);
  });

  it("settles on a capture that arrives before the approval, and ignores the stale approval", async () => {
    const { id, order, buyer } = await newIntent();
    const provider = testProvider(t);
    const approval = await provider.approve(order);
    await provider.captureOrder(order);
    const captured = (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!;
    expect((await deliver(t, captured)).body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");
    expect(await statusOf(id)).toBe("INTENT_STATUS_SETTLED");
    expect((await deliver(t, approval)).body.status).toBe("PROVIDER_EVENT_STATUS_IGNORED");
    expect(await statusOf(id)).toBe("INTENT_STATUS_SETTLED");
    expect(await creditOf(buyer)).toBe("500");
  });

  it("declines on order.declined, and ignores a decline of a settled intent", async () => {
    const declined = await newIntent();
    const provider = testProvider(t);
    expect((await deliver(t, await provider.decline(declined.order, "fraud_suspected"))).body.status).toBe(
      "PROVIDER_EVENT_STATUS_APPLIED",
    );
    const read = (await t.http("GET", `/billing/api/v1/intents/${declined.id}`, { token: tips })).body.intent;
    expect(read).toMatchObject({ status: "INTENT_STATUS_DECLINED", decline_reason: "fraud_suspected" });
    // A capture asked of a declined intent answers it as it is.
    expect(
      (await t.http("POST", `/billing/api/v1/intents/${declined.id}/capture`, { token: tips, body: {} })).body.intent
        .status,
    ).toBe("INTENT_STATUS_DECLINED");

    const settled = await newIntent();
    await provider.approve(settled.order);
    await t.http("POST", `/billing/api/v1/intents/${settled.id}/capture`, { token: tips, body: {} });
    expect((await deliver(t, await provider.decline(settled.order, "late"))).body.status).toBe(
      "PROVIDER_EVENT_STATUS_IGNORED",
    );
    expect(await statusOf(settled.id)).toBe("INTENT_STATUS_SETTLED");
  });

  it("ignores an event for an order billing does not know", async () => {
    const provider = testProvider(t);
    const { orderId } = await provider.createOrder({ currency: "USD", price: 100n, requestId: "no-intent" });
    expect((await deliver(t, await provider.approve(orderId))).body).toMatchObject({
      status: "PROVIDER_EVENT_STATUS_IGNORED",
      duplicate: false,
    });
  });

  it("holds events while the economy is frozen and applies them in order after the thaw", async () => {
    const { id, order, buyer } = await newIntent();
    const provider = testProvider(t);
    await setFrozen(t, true);
    try {
      const approval = await deliver(t, await provider.approve(order));
      await provider.captureOrder(order);
      const capture = await deliver(
        t,
        (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!,
      );
      expect([approval.body.status, capture.body.status]).toEqual([
        "PROVIDER_EVENT_STATUS_HELD",
        "PROVIDER_EVENT_STATUS_HELD",
      ]);
      // Still frozen: a pass leaves held events alone.
      await applyProviderEvents(billingOf(t));
      expect(await statusOf(id)).toBe("INTENT_STATUS_REQUIRES_ACTION");
    } finally {
      await setFrozen(t, false);
    }
    await applyProviderEvents(billingOf(t));
    expect(await statusOf(id)).toBe("INTENT_STATUS_SETTLED");
    expect(await creditOf(buyer)).toBe("500");
    const rows = await billingOf(t)
      .orm.em.getConnection()
      .execute(`select type, status from billing.provider_events where provider_order_id = ? order by seq`, [order]);
    expect(rows).toEqual([
      { type: "order.approved", status: "applied" },
      { type: "payment.captured", status: "applied" },
    ]);
  });

  it("never applies an event twice when instances apply at once", async () => {
    const intents = await Promise.all([1, 2, 3, 4].map(() => newIntent()));
    const provider = testProvider(t);
    await setFrozen(t, true);
    try {
      for (const { order } of intents) {
        await provider.approve(order);
        await provider.captureOrder(order);
        await deliver(
          t,
          (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!,
        );
      }
    } finally {
      await setFrozen(t, false);
    }
    const ctx = billingOf(t);
    await Promise.all([applyProviderEvents(ctx), applyProviderEvents(ctx), applyProviderEvents(ctx)]);
    for (const { id, buyer } of intents) {
      expect(await statusOf(id)).toBe("INTENT_STATUS_SETTLED");
      expect(await creditOf(buyer)).toBe("500");
    }
  });
});

describe("test provider auto mode", () => {
  const auto = usePlatform({ services: ["billing"], env: { PF_BILLING_TEST_PROVIDER_AUTO: "approve" } });

  it("approves each new order by a signed webhook to billing, so capture settles without a test driver", async () => {
    const token = await auto.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
    const created = await auto.http("POST", "/billing/api/v1/intents", { token, body: packPurchase(person()) });
    const id = created.body.intent.id;
    await expect
      .poll(async () => (await auto.http("GET", `/billing/api/v1/intents/${id}`, { token })).body.intent.status, {
        timeout: 5000,
        interval: 100,
      })
      .toBe("INTENT_STATUS_APPROVED");
    const captured = await auto.http("POST", `/billing/api/v1/intents/${id}/capture`, { token, body: {} });
    expect(captured.body.intent.status).toBe("INTENT_STATUS_SETTLED");
  });
});
