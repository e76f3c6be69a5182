import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { protoComments } from "../../gen/pf/docs.js";
import { BillingAdminService } from "../../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { designed as designedOption } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { ALL_BUT_MANAGE } from "./support.js";

const usd = (minor: number) => ({ minor_units: minor, currency: "USD" });

/** One valid call per billing route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  createTransfer: {
    method: "POST",
    path: "/billing/api/v1/transfers",
    body: { from_subject: "usr_a1", to_subject: "usr_b1", amount: usd(1), idempotency_key: "k" },
  },
  getBalance: { method: "GET", path: "/billing/api/v1/balances/usr_a1" },
  listTransactions: { method: "GET", path: "/billing/api/v1/balances/usr_a1/transactions" },
  createIntent: {
    method: "POST",
    path: "/billing/api/v1/intents",
    body: { subject: "usr_a1", credit: { pack: "credits_500" } },
  },
  getIntent: { method: "GET", path: "/billing/api/v1/intents/pi_1" },
  captureIntent: { method: "POST", path: "/billing/api/v1/intents/pi_1/capture", body: {} },
  receiveProviderWebhook: { method: "POST", path: "/billing/api/v1/webhooks/test", body: {} },
  listCashouts: { method: "GET", path: "/billing/api/v1/cashouts" },
  requestCashout: {
    method: "POST",
    path: "/billing/api/v1/cashouts",
    body: { subject: "usr_a1", amount: usd(5000), idempotency_key: "k" },
  },
  getCashout: { method: "GET", path: "/billing/api/v1/cashouts/co_1" },
  approveCashout: { method: "POST", path: "/billing/api/v1/cashouts/co_1/approve", body: { payout_reference: "po_1" } },
  denyCashout: { method: "POST", path: "/billing/api/v1/cashouts/co_1/deny", body: { reason: "no" } },
  recyclePayable: {
    method: "POST",
    path: "/billing/api/v1/recycle",
    body: { subject: "usr_a1", amount: usd(1), idempotency_key: "k" },
  },
  getEntitlements: { method: "GET", path: "/billing/api/v1/entitlements/usr_a1" },
  listSubscriptions: { method: "GET", path: "/billing/api/v1/subscriptions?subject=usr_a1" },
  createSubscription: {
    method: "POST",
    path: "/billing/api/v1/subscriptions",
    body: { subject: "usr_a1", streamer: "usr_b1", plan_id: "pln_1", plan_version: 1, idempotency_key: "k" },
  },
  cancelSubscription: { method: "POST", path: "/billing/api/v1/subscriptions/sub_1/cancel", body: {} },
  postAdjustment: {
    method: "POST",
    path: "/billing/api/v1/admin/adjustments",
    body: {
      reason: "fix",
      idempotency_key: "k",
      lines: [
        { owner: "usr_a1", kind: "ACCOUNT_KIND_CREDIT", amount: usd(1) },
        { owner: "", kind: "ACCOUNT_KIND_ADJUSTMENTS", amount: usd(-1) },
      ],
    },
  },
  getFreeze: { method: "GET", path: "/billing/api/v1/admin/freeze" },
  setFreeze: { method: "POST", path: "/billing/api/v1/admin/freeze", body: { frozen: false, reason: "check" } },
  listImportHolds: { method: "GET", path: "/billing/api/v1/admin/import-holds" },
  releaseImportHold: { method: "POST", path: "/billing/api/v1/admin/import-holds/ih_1/release", body: {} },
  listProviderEvents: { method: "GET", path: "/billing/api/v1/admin/provider-events" },
  reprocessProviderEvent: { method: "POST", path: "/billing/api/v1/admin/provider-events/pev_1/reprocess", body: {} },
  runReconciliation: { method: "GET", path: "/billing/api/v1/admin/reconcile" },
  getReconciliation: { method: "GET", path: "/billing/api/v1/admin/reconcile/rec_1" },
  runSweep: { method: "POST", path: "/billing/api/v1/admin/sweep", body: {} },
  settlePurchase: {
    method: "POST",
    path: "/billing/api/v1/purchases/settle",
    body: { intent_id: "pi_1", receipt: "r" },
  },
};

const routes = routesOf(BillingService, BillingAdminService);
const t = usePlatform({ services: ["billing"] });

describe("every billing route", () => {
  it("has a call here", () => {
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  // Method, path, capability and visibility of the 21 documented routes; the other 7 are designed.
  itWithSpec(
    "matches routes.tsv where documented; the other 7 are marked designed and described",
    "billing",
    (documented) => {
      expect(routes).toHaveLength(28);
      expect(documented).toHaveLength(21);
      const bound = routes.map((route) => ({ route, binding: bindingOf(route) }));
      for (const [, verb, path, caps, visibility] of documented) {
        expect(
          bound.map((b) => b.binding),
          `${verb} ${path}`,
        ).toContainEqual({ verb, template: path, caps, visibility });
      }
      const designed = bound.filter(
        ({ binding }) => !documented.some(([, verb, path]) => verb === binding.verb && path === binding.template),
      );
      expect(designed).toHaveLength(7);
      for (const { route } of bound) {
        const isDesigned = designed.some((d) => d.route === route);
        expect(getOption(route.method, designedOption), route.name).toBe(isDesigned);
        // The comment describes the route (it becomes the OpenAPI summary); why it is designed comes after.
        const comment = protoComments[`${route.method.parent.typeName}.${route.method.name}`];
        expect(comment, route.name).not.toMatch(/^Designed/);
      }
    },
  );
});

describeRefusals(t, routes, calls);
// The webhook takes the provider's raw body: there are no fields to refuse.
describeMalformedInput(
  t,
  routes.filter((route) => route.name !== "receiveProviderWebhook"),
  calls,
);

describe("billing.cashout.manage is granted on its own", () => {
  const manage = ["listCashouts", "approveCashout", "denyCashout"];

  it.each(manage)(
    "%s refuses a token holding every other billing capability (403 auth.capability_missing)",
    async (name) => {
      const call = calls[name];
      const token = await t.token({ kind: "service", svc: "ops", caps: ALL_BUT_MANAGE });
      const answer = await t.http(call.method, call.path, { token, body: call.body });
      expect(answer.body).toMatchObject({ status: 403, code: "auth.capability_missing" });
    },
  );

  it.each(manage)(
    "%s refuses a token carrying it together with any other capability (403 auth.separate_grant)",
    async (name) => {
      const call = calls[name];
      const token = await t.token({
        kind: "service",
        svc: "ops",
        caps: ["billing.cashout.manage", "billing.balance.read"],
      });
      const answer = await t.http(call.method, call.path, { token, body: call.body });
      expect(answer.body).toMatchObject({ status: 403, code: "auth.separate_grant" });
    },
  );

  it("lets a token holding only billing.cashout.manage list cashouts", async () => {
    const token = await t.token({ kind: "service", svc: "ops", caps: ["billing.cashout.manage"] });
    const answer = await t.http("GET", "/billing/api/v1/cashouts", { token });
    expect(answer.status).toBe(200);
  });
});
