import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChannelSubscriptionSchema, CreditPurchaseSchema } from "../../gen/pf/billing/v1/intents_pb.js";
import { defaultCatalogue } from "../../services/billing/domain/catalogue.js";
import {
  purchaseMovements,
  quote,
  receiptMismatches,
  transition,
  type IntentState,
} from "../../services/billing/domain/intents.js";
import { requireBalanced } from "../../services/billing/domain/ledger.js";
import { signDelivery, verifyDelivery } from "../../services/billing/provider/standard-webhooks.js";

describe("intent transitions", () => {
  const states: IntentState[] = ["requires_action", "approved", "settled", "declined"];
  const table = (action: "approve" | "decline" | "settle") =>
    Object.fromEntries(states.map((s) => [s, transition(s, action).kind]));

  it("approve: only from requires_action", () => {
    expect(table("approve")).toEqual({
      requires_action: "move",
      approved: "unchanged",
      settled: "stale",
      declined: "stale",
    });
  });

  it("decline: from requires_action or approved; never a settled intent", () => {
    expect(table("decline")).toEqual({
      requires_action: "move",
      approved: "move",
      settled: "stale",
      declined: "unchanged",
    });
  });

  it("settle: from requires_action (a capture before its approval, an app receipt) or approved; once", () => {
    expect(table("settle")).toEqual({
      requires_action: "move",
      approved: "move",
      settled: "unchanged",
      declined: "stale",
    });
    expect(transition("approved", "settle")).toEqual({ kind: "move", to: "settled" });
    expect(transition("declined", "settle")).toEqual({ kind: "stale", detail: "The intent is already declined." });
  });
});

describe("pricing an intent", () => {
  it("prices packs, amounts of credit and subscription tiers from the catalogue", () => {
    expect(
      quote(defaultCatalogue, "usr_a", {
        case: "credit",
        value: create(CreditPurchaseSchema, { pack: "credits_1000" }),
      }),
    ).toMatchObject({ price: 1000n, credit: 1000n, pack: "credits_1000" });
    const tier = quote(defaultCatalogue, "usr_a", {
      case: "channelSubscription",
      value: create(ChannelSubscriptionSchema, { streamer: "usr_b", planId: "pln_1", planVersion: 1n }),
    });
    expect(tier).toMatchObject({
      product: "channel_subscription",
      tier: "tier_1",
      price: 499n,
      credit: 0n,
      streamer: "usr_b",
    });
  });
});

describe("purchase movements", () => {
  const purchase = {
    product: "credit",
    subject: "usr_a",
    streamer: "",
    currency: "USD",
    price: 900n,
    creditGranted: 900n,
  };

  it("moves the price out of the provider's clearing account into the buyer's credit", () => {
    expect(purchaseMovements(purchase, "test")).toEqual([
      { owner: "test", kind: "provider_clearing", currency: "USD", amount: -900n },
      { owner: "usr_a", kind: "credit", currency: "USD", amount: 900n },
    ]);
  });

  it("books a difference between price and credit to the platform, balanced", () => {
    const movements = purchaseMovements({ ...purchase, creditGranted: 1000n }, "test");
    expect(movements[2]).toEqual({ owner: "platform", kind: "adjustments", currency: "USD", amount: -100n });
    expect(() => requireBalanced(movements)).not.toThrow();
  });

  it("pays a channel subscription to the streamer's payable", () => {
    expect(
      purchaseMovements({ ...purchase, product: "channel_subscription", streamer: "usr_s", creditGranted: 0n }, "test"),
    ).toEqual([
      { owner: "test", kind: "provider_clearing", currency: "USD", amount: -900n },
      { owner: "usr_s", kind: "payable", currency: "USD", amount: 900n },
    ]);
  });
});

describe("receipts", () => {
  const intent = { appReference: "app_pi_1", currency: "USD", price: 500n };

  it("match an intent on app reference, currency and amount", () => {
    expect(receiptMismatches(intent, { appReference: "app_pi_1", currency: "USD", amount: 500n })).toEqual([]);
    expect(receiptMismatches(intent, { appReference: "app_pi_2", currency: "EUR", amount: 501n })).toEqual([
      "app_reference",
      "currency",
      "amount",
    ]);
    expect(
      receiptMismatches({ ...intent, appReference: "" }, { appReference: "", currency: "USD", amount: 500n }),
    ).toEqual(["app_reference"]);
  });
});

describe("Standard Webhooks signatures", () => {
  const body = Buffer.from('{"type":"order.approved"}');
  const at = new Date("2026-03-01T12:00:00Z");
  const headers = (h: Record<string, string>) => new Headers(h);

  it("verify within five minutes either way, among several signatures", () => {
    const signed = signDelivery("secret", "msg_1", body, at);
    expect(verifyDelivery("secret", headers({ ...signed }), body, new Date(at.getTime() + 299_000))).toBe("msg_1");
    const rotated = { ...signed, "webhook-signature": `v1,AAAA ${signed["webhook-signature"]}` };
    expect(verifyDelivery("secret", headers(rotated), body, new Date(at.getTime() - 299_000))).toBe("msg_1");
  });

  it("refuse another secret, another body, another id and a stale timestamp", () => {
    const signed = signDelivery("secret", "msg_1", body, at);
    const refused = (fn: () => unknown) => expect(fn).toThrow(/signature|timestamp|lacks/);
    refused(() => verifyDelivery("other", headers({ ...signed }), body, at));
    refused(() => verifyDelivery("secret", headers({ ...signed }), Buffer.from("{}"), at));
    refused(() => verifyDelivery("secret", headers({ ...signed, "webhook-id": "msg_2" }), body, at));
    refused(() => verifyDelivery("secret", headers({ ...signed }), body, new Date(at.getTime() + 301_000)));
    refused(() => verifyDelivery("secret", headers({ "webhook-id": "msg_1" }), body, at));
  });
});
