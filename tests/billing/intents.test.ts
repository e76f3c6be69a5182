import { beforeAll, describe, expect, it } from "vitest";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { IntentStatus } from "../../gen/pf/billing/v1/intents_pb.js";
import { usePlatform } from "../support/platform.js";
import { eventsAbout, setFrozen } from "./checks.js";
import { deliver, orderOf, packPurchase, testProvider } from "./payments.js";
import { person } from "./support.js";

// The default catalogue, plus a pack whose credit differs from its price (the platform pays the bonus).
const CATALOGUE = {
  packs: {
    credits_500: { currency: "USD", price: 500, credit: 500 },
    bonus_1000: { currency: "USD", price: 900, credit: 1000 },
  },
  credit_rates: { USD: { min: 100, max: 100000 }, EUR: { min: 100, max: 100000 } },
  tiers: { tier_1: { currency: "USD", price: 499 }, tier_2: { currency: "USD", price: 999 } },
};

const t = usePlatform({ services: ["billing"], env: { PF_BILLING_CATALOGUE: JSON.stringify(CATALOGUE) } });
let tips: string;
let reader: string;
let admin: string;

beforeAll(async () => {
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read", "billing.entitlement.check"] });
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
});

const createIntent = (body: unknown, headers?: Record<string, string>) =>
  t.http("POST", "/billing/api/v1/intents", { token: tips, body, headers });
const getIntent = (id: string) => t.http("GET", `/billing/api/v1/intents/${id}`, { token: tips });
const capture = (id: string) => t.http("POST", `/billing/api/v1/intents/${id}/capture`, { token: tips, body: {} });
const settle = (body: unknown) => t.http("POST", "/billing/api/v1/purchases/settle", { token: admin, body });
const balances = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances;

describe("creating an intent", () => {
  it("prices a credit pack from billing's catalogue and answers the provider checkout URL (201)", async () => {
    const buyer = person("buyer");
    const answer = await createIntent({
      ...packPurchase(buyer),
      return_url: "https://app.example/done",
      reference: { service: "tips", kind: "tip", id: "tip_1" },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.intent).toMatchObject({
      subject: buyer,
      status: "INTENT_STATUS_REQUIRES_ACTION",
      credit: { pack: "credits_500" },
      price: { minor_units: "500", currency: "USD" },
      credit_granted: { minor_units: "500", currency: "USD" },
      provider: "test",
      app_reference: "",
      reference: { service: "tips", kind: "tip", id: "tip_1" },
    });
    expect(answer.body.intent.id).toMatch(/^pi_/);
    expect(answer.body.intent.checkout_url).toContain(orderOf(answer));
    expect((await getIntent(answer.body.intent.id)).body).toEqual(answer.body);
  });

  it("prices an amount of credit at face value", async () => {
    const answer = await createIntent({
      subject: person(),
      credit: { credit: { minor_units: 1234, currency: "EUR" } },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.intent).toMatchObject({
      price: { minor_units: "1234", currency: "EUR" },
      credit: { pack: "", credit: { minor_units: "1234" } },
    });
  });

  it("refuses a price sent by the caller (400 billing.price_refused)", async () => {
    const answer = await createIntent({ ...packPurchase(person()), price: { minor_units: 1, currency: "USD" } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "billing.price_refused", field: "price" });
  });

  it.each([
    ["subject", { credit: { pack: "credits_500" } }],
    ["product", { subject: "usr_a1" }],
    ["credit", { subject: "usr_a1", credit: {} }],
    ["credit", { subject: "usr_a1", credit: { pack: "credits_500", credit: { minor_units: 100, currency: "USD" } } }],
    ["credit.credit.currency", { subject: "usr_a1", credit: { credit: { minor_units: 100, currency: "usd" } } }],
    [
      "channel_subscription.streamer",
      { subject: "usr_a1", channel_subscription: { streamer: "usr_a1", plan_id: "pln_1", plan_version: 1 } },
    ],
    [
      "channel_subscription.plan_id",
      { subject: "usr_a1", channel_subscription: { streamer: "usr_b1", plan_version: 1 } },
    ],
    [
      "channel_subscription.plan_version",
      { subject: "usr_a1", channel_subscription: { streamer: "usr_b1", plan_id: "pln_1" } },
    ],
    ["return_url", { ...packPurchase("usr_a1"), return_url: "javascript:alert(1)" }],
    ["reference", { ...packPurchase("usr_a1"), reference: { service: "tips" } }],
  ])("refuses bad input naming %s (400)", async (field, body) => {
    const answer = await createIntent(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "request.invalid", field });
  });

  it("refuses what the catalogue does not sell (422) and an unknown provider (404)", async () => {
    expect((await createIntent(packPurchase("usr_a1", "credits_999"))).body).toMatchObject({
      status: 422,
      code: "billing.unknown_product",
    });
    expect(
      (await createIntent({ subject: "usr_a1", credit: { credit: { minor_units: 1, currency: "USD" } } })).body,
    ).toMatchObject({
      status: 422,
      code: "billing.amount_out_of_range",
    });
    const tier = await createIntent({
      subject: "usr_a1",
      channel_subscription: { streamer: "usr_b1", plan_id: "pln_1", plan_version: 1, tier: "gold" },
    });
    expect(tier.body).toMatchObject({ status: 422, code: "billing.unknown_tier" });
    expect((await createIntent({ ...packPurchase("usr_a1"), provider: "nope" })).body).toMatchObject({
      status: 404,
      code: "provider.unknown",
    });
  });

  it("answers a retried idempotency key with the first intent and refuses the key with another body", async () => {
    const buyer = person();
    const first = await createIntent({ ...packPurchase(buyer), idempotency_key: `k-${buyer}` });
    const again = await createIntent(packPurchase(buyer), { "idempotency-key": `k-${buyer}` });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const other = await createIntent({ ...packPurchase(buyer, "bonus_1000"), idempotency_key: `k-${buyer}` });
    expect(other.body).toMatchObject({ status: 409, code: "idempotency.mismatch" });
  });

  it("is refused while the economy is frozen (409 economy.frozen)", async () => {
    await setFrozen(t, true);
    try {
      expect((await createIntent(packPurchase(person()))).body).toMatchObject({ status: 409, code: "economy.frozen" });
    } finally {
      await setFrozen(t, false);
    }
  });

  it("answers 404 intent.not_found for an intent that does not exist", async () => {
    expect((await getIntent("pi_none")).body).toMatchObject({ status: 404, code: "intent.not_found" });
    expect((await capture("pi_none")).body).toMatchObject({ status: 404, code: "intent.not_found" });
  });
});

describe("the web checkout", () => {
  it("create → buyer approves → signed webhook → capture → settled, and the ledger moves once", async () => {
    const buyer = person("buyer");
    const created = await createIntent(packPurchase(buyer));
    const id = created.body.intent.id;
    expect((await capture(id)).body).toMatchObject({ status: 409, code: "intent.not_approved" });

    const provider = testProvider(t);
    const approved = await deliver(t, await provider.approve(orderOf(created)));
    expect(approved.body).toMatchObject({ status: "PROVIDER_EVENT_STATUS_APPLIED", duplicate: false });
    expect((await getIntent(id)).body.intent.status).toBe("INTENT_STATUS_APPROVED");

    const captured = await capture(id);
    expect(captured.status).toBe(200);
    expect(captured.body.intent).toMatchObject({ status: "INTENT_STATUS_SETTLED" });
    expect(captured.body.intent.transaction_id).toMatch(/^ltx_/);
    expect(captured.body.intent.settled_at).toBeTruthy();
    expect(await balances(buyer)).toEqual([expect.objectContaining({ currency: "USD", spendable_credit: "500" })]);

    // Settled once: capturing again answers it unchanged, the ledger does not move again.
    expect((await capture(id)).body).toEqual(captured.body);
    expect(await balances(buyer)).toEqual([expect.objectContaining({ spendable_credit: "500" })]);
    const history = await t.http("GET", `/billing/api/v1/balances/${buyer}/transactions`, { token: reader });
    expect(history.body.transactions).toHaveLength(1);
    expect(history.body.transactions[0]).toMatchObject({
      id: captured.body.intent.transaction_id,
      kind: "TRANSACTION_KIND_PURCHASE",
      reference: { service: "billing", kind: "intent", id },
    });
    expect(history.body.transactions[0].entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          owner: "test",
          kind: "ACCOUNT_KIND_PROVIDER_CLEARING",
          amount: { minor_units: "-500", currency: "USD" },
        }),
        expect.objectContaining({
          owner: buyer,
          kind: "ACCOUNT_KIND_CREDIT",
          amount: { minor_units: "500", currency: "USD" },
        }),
      ]),
    );
    expect(await eventsAbout(t, id)).toEqual(["billing.intent.settled"]);
  });

  it("books the difference of a bonus pack to the platform's adjustments account", async () => {
    const buyer = person();
    const created = await createIntent(packPurchase(buyer, "bonus_1000"));
    await testProvider(t).approve(orderOf(created));
    const captured = await capture(created.body.intent.id);
    expect(captured.body.intent).toMatchObject({
      status: "INTENT_STATUS_SETTLED",
      price: { minor_units: "900" },
      credit_granted: { minor_units: "1000" },
    });
    const history = await t.http("GET", `/billing/api/v1/balances/${buyer}/transactions`, { token: reader });
    expect(history.body.transactions[0].entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          owner: "test",
          kind: "ACCOUNT_KIND_PROVIDER_CLEARING",
          amount: { minor_units: "-900", currency: "USD" },
        }),
        expect.objectContaining({
          owner: buyer,
          kind: "ACCOUNT_KIND_CREDIT",
          amount: { minor_units: "1000", currency: "USD" },
        }),
        expect.objectContaining({
          owner: "platform",
          kind: "ACCOUNT_KIND_ADJUSTMENTS",
          amount: { minor_units: "-100", currency: "USD" },
        }),
      ]),
    );
  });

  it("marks an intent the provider declines at capture declined (and publishes billing.intent.declined)", async () => {
    const created = await createIntent(packPurchase(person()));
    const id = created.body.intent.id;
    const provider = testProvider(t);
    await provider.approve(orderOf(created));
    await provider.decline(orderOf(created), "card_declined");
    const answer = await capture(id);
    expect(answer.body.intent).toMatchObject({
      status: "INTENT_STATUS_DECLINED",
      decline_reason: "card_declined",
      transaction_id: "",
    });
    expect(await eventsAbout(t, id)).toEqual(["billing.intent.declined"]);
  });

  it("buys a channel subscription: the streamer's payable grows and the buyer is entitled", async () => {
    const [fan, streamer] = [person("fan"), person("st")];
    const client = t.client(BillingService, tips);
    const created = await client.createIntent({
      subject: fan,
      product: { case: "channelSubscription", value: { streamer, planId: "pln_1", planVersion: 2n, tier: "tier_2" } },
    });
    expect(created.intent).toMatchObject({
      status: IntentStatus.REQUIRES_ACTION,
      price: { minorUnits: 999n, currency: "USD" },
      creditGranted: { minorUnits: 0n },
    });
    await testProvider(t).approve(created.intent!.providerOrderId);
    const settled = await client.captureIntent({ id: created.intent!.id });
    expect(settled.intent?.status).toBe(IntentStatus.SETTLED);
    expect(settled.intent?.subscriptionId).toMatch(/^sub_/);
    expect(await balances(streamer)).toEqual([expect.objectContaining({ creator_payable: "999" })]);
    const entitlements = await t.http("GET", `/billing/api/v1/entitlements/${fan}`, { token: reader });
    expect(entitlements.body.entitlements).toEqual([
      expect.objectContaining({
        subject: fan,
        streamer,
        subscription_id: settled.intent!.subscriptionId,
        plan_id: "pln_1",
        plan_version: "2",
      }),
    ]);
  });
});

describe("the app checkout, settled with a store receipt", () => {
  const appIntent = async (buyer: string) => {
    const answer = await createIntent({ ...packPurchase(buyer), checkout: "CHECKOUT_KIND_APP" });
    expect(answer.status).toBe(201);
    return answer.body.intent;
  };
  const receiptFor = (intent: { app_reference: string }, amount = 500n, currency = "USD") =>
    testProvider(t).signReceipt({ appReference: intent.app_reference, currency, amount });

  it("answers an app reference and settles once with the verified receipt", async () => {
    const buyer = person();
    const intent = await appIntent(buyer);
    expect(intent).toMatchObject({ app_reference: `app_${intent.id}`, checkout_url: "" });
    expect((await capture(intent.id)).body).toMatchObject({ status: 409, code: "intent.not_approved" });

    const body = { intent_id: intent.id, receipt: receiptFor(intent), idempotency_key: `s-${intent.id}` };
    const settled = await settle(body);
    expect(settled.status).toBe(200);
    expect(settled.body.intent).toMatchObject({ id: intent.id, status: "INTENT_STATUS_SETTLED" });
    expect((await settle(body)).body).toEqual(settled.body);
    expect((await settle({ ...body, idempotency_key: "" })).body.intent.transaction_id).toBe(
      settled.body.intent.transaction_id,
    );
    expect(await balances(buyer)).toEqual([expect.objectContaining({ spendable_credit: "500" })]);
  });

  it("refuses a receipt that does not verify (400 receipt.invalid) or pays something else (422 receipt.mismatch)", async () => {
    const intent = await appIntent(person());
    const receipt = receiptFor(intent);
    expect((await settle({ intent_id: intent.id, receipt: `${receipt}x` })).body).toMatchObject({
      status: 400,
      code: "receipt.invalid",
    });
    expect((await settle({ intent_id: intent.id, receipt: receiptFor(intent, 499n) })).body).toMatchObject({
      status: 422,
      code: "receipt.mismatch",
      fields: ["amount"],
    });
    const other = await appIntent(person());
    expect((await settle({ intent_id: intent.id, receipt: receiptFor(other, 500n, "EUR") })).body).toMatchObject({
      status: 422,
      fields: ["app_reference", "currency"],
    });
    const web = (await createIntent(packPurchase(person()))).body.intent;
    expect((await settle({ intent_id: web.id, receipt })).body).toMatchObject({
      status: 422,
      code: "receipt.mismatch",
    });
  });

  it("refuses missing fields, an unknown intent and a frozen economy", async () => {
    expect((await settle({ receipt: "x" })).body).toMatchObject({ status: 400, field: "intent_id" });
    expect((await settle({ intent_id: "pi_x" })).body).toMatchObject({ status: 400, field: "receipt" });
    expect((await settle({ intent_id: "pi_none", receipt: "x.y" })).body).toMatchObject({
      status: 404,
      code: "intent.not_found",
    });
    const intent = await appIntent(person());
    await setFrozen(t, true);
    try {
      expect((await settle({ intent_id: intent.id, receipt: receiptFor(intent) })).body).toMatchObject({
        status: 409,
        code: "economy.frozen",
      });
    } finally {
      await setFrozen(t, false);
    }
    expect((await getIntent(intent.id)).body.intent.status).toBe("INTENT_STATUS_REQUIRES_ACTION");
  });
});
