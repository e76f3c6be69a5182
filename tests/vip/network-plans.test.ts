import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { deliver, testProvider } from "../billing/payments.js";
import { billingOf, fund } from "../billing/support.js";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, expectStatus, person, serviceToken, userToken, until } from "./support.js";

const clock = new ManualClock(new Date("2026-07-01T00:00:00Z"));
const t = usePlatform({
  services: ["vip", "billing"],
  clock,
  env: { PF_BILLING_SWEEP_EVERY_MS: "2000000000", PF_VIP_ENTITLEMENT_GRACE_SECONDS: "3600" },
});

let staff: string;
let plan: { id: string };

beforeAll(async () => {
  staff = await serviceToken(t);
  plan = await createPlan(t, staff, { owner: "network", name: "Network pass", publish: true });
});

const checkout = async (fan: string, body: Record<string, unknown>) =>
  t.http("POST", "/vip/api/v1/checkout", { token: await userToken(t, fan), body });
const check = (subject: string, mode = "CHECK_MODE_AUTO") =>
  t
    .http("GET", `/vip/api/v1/entitlements/check?subject=${subject}&creator=network&mode=${mode}`, { token: staff })
    .then((a) => expectStatus(a, 200).body);

/** The platform's revenue in USD (network plans are paid there, not to a person). */
async function revenue(): Promise<bigint> {
  const [row] = await billingOf(t)
    .orm.em.getConnection()
    .execute<{ balance: string }[]>(
      `select balance from billing.accounts where owner = 'platform' and kind = 'revenue' and currency = 'USD'`,
    );
  return BigInt(row?.balance ?? 0);
}

describe("a network plan", () => {
  it("is sold from credit through billing's network channel, pays the platform's revenue, and entitles", async () => {
    const fan = person("fan");
    await fund(t, fan, 1_000n);
    const before = await revenue();
    const answer = expectStatus(
      await checkout(fan, { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "n1" }),
      201,
    ).body;
    expect(answer.price).toEqual({ minor_units: "499", currency: "USD" });
    expect(answer.membership).toMatchObject({
      member: fan,
      creator: "network",
      plan_id: plan.id,
      plan_version: { version: "1" },
      entitlement: { member: true, status: "ENTITLEMENT_STATUS_MEMBER", source: "SOURCE_BILLING", creator: "network" },
    });
    expect(await revenue()).toBe(before + 499n);
    expect(await check(fan, "CHECK_MODE_AUTHORITATIVE")).toMatchObject({
      member: true,
      plan_id: plan.id,
      source: "SOURCE_BILLING",
    });
    const members = expectStatus(
      await t.http("GET", "/vip/api/v1/creators/network/members", { token: staff }),
      200,
    ).body;
    expect(members.members.map((m: { subject: string }) => m.subject)).toContain(fan);
    // Only the grant reads the network's members; a person is refused.
    expectStatus(
      await t.http("GET", "/vip/api/v1/creators/network/members", { token: await userToken(t, fan) }),
      403,
      "vip.forbidden",
    );
  });

  it("gates resources by rules of the network's own, set by staff only and naming network plans and perks", async () => {
    const perk = await createPerk(t, staff, { owner: "network", kind: "PERK_KIND_ROOM", name: "Network lounge" });
    const withPerk = await createPlan(t, staff, {
      owner: "network",
      name: "Network plus",
      perk_ids: [perk.id],
      publish: true,
    });
    const [plain, plus, none] = [person("fan"), person("fan"), person("none")];
    for (const [fan, planId] of [
      [plain, plan.id],
      [plus, withPerk.id],
    ]) {
      await fund(t, fan, 1_000n);
      expectStatus(
        await checkout(fan, { plan_id: planId, paid_via: "PAID_VIA_CREDIT", idempotency_key: `p-${fan}` }),
        201,
      );
    }
    const creator = person("cr");
    const mine = await userToken(t, creator);
    const creatorsPlan = await createPlan(t, mine, { publish: true });
    const creatorsPerk = await createPerk(t, mine);
    // The network's resources the rules gate: its plans and perks, which vip holds.
    const lounge = await createPerk(t, staff, { owner: "network", kind: "PERK_KIND_ROOM", name: "Network stage" });
    const gated: Record<string, { service: string; kind: string; id: string }> = {
      plan: { service: "vip", kind: "plan", id: plan.id },
      perk: { service: "vip", kind: "perk", id: perk.id },
      any: { service: "vip", kind: "plan", id: withPerk.id },
      x: { service: "vip", kind: "perk", id: lounge.id },
    };
    const resource = (name: string) => gated[name];
    const set = (body: Record<string, unknown>, token = staff) =>
      t.http("POST", "/vip/api/v1/policies", { token, body: { creator: "network", ...body } });

    const byPlan = expectStatus(
      await set({ resource: resource("plan"), rule: "POLICY_RULE_PLAN_MEMBER", plan_id: withPerk.id }),
      201,
    ).body.policy;
    expect(byPlan).toMatchObject({ creator: "network", plan_id: withPerk.id, set_by: "svc:community" });
    expectStatus(
      await set({
        resource: resource("perk"),
        rule: "POLICY_RULE_PERK_HOLDER",
        perk_id: perk.id,
        always_check_billing: true,
      }),
      201,
    );
    expectStatus(await set({ resource: resource("any"), rule: "POLICY_RULE_ANY_MEMBER" }), 201);
    // Replaced by staff: 200, same id.
    expect(
      expectStatus(
        await set({ resource: resource("plan"), rule: "POLICY_RULE_PLAN_MEMBER", plan_id: withPerk.id }),
        200,
      ).body.policy.id,
    ).toBe(byPlan.id);

    // Not staff: a person (even naming the network) is refused, and sees no network rule.
    expectStatus(await set({ resource: resource("x"), rule: "POLICY_RULE_ANY_MEMBER" }, mine), 403, "vip.not_owner");
    expectStatus(await t.http("GET", `/vip/api/v1/policies/${byPlan.id}`, { token: mine }), 404, "policy.not_found");
    expectStatus(await t.http("DELETE", `/vip/api/v1/policies/${byPlan.id}`, { token: mine }), 404, "policy.not_found");
    expectStatus(await t.http("GET", "/vip/api/v1/policies?creator=network", { token: mine }), 403, "vip.forbidden");
    const listed = expectStatus(await t.http("GET", "/vip/api/v1/policies?creator=network", { token: staff }), 200).body
      .policies.policies;
    expect(listed.map((p: { id: string }) => p.id)).toContain(byPlan.id);
    // A creator's resource is not the network's to take, nor the network's the creator's.
    expectStatus(
      await t.http("POST", "/vip/api/v1/policies", {
        token: mine,
        body: { resource: resource("any"), rule: "POLICY_RULE_ANY_MEMBER" },
      }),
      403,
      "vip.not_owner",
    );
    expectStatus(
      await set({ resource: { service: "vip", kind: "plan", id: creatorsPlan.id }, rule: "POLICY_RULE_ANY_MEMBER" }),
      403,
      "vip.not_owner",
    );
    // A network rule names network plans and perks only.
    expect(
      (await set({ resource: resource("x"), rule: "POLICY_RULE_PLAN_MEMBER", plan_id: creatorsPlan.id })).body,
    ).toMatchObject({ status: 422, field: "plan_id" });
    expect(
      (await set({ resource: resource("x"), rule: "POLICY_RULE_PERK_HOLDER", perk_id: creatorsPerk.id })).body,
    ).toMatchObject({ status: 422, field: "perk_id" });

    const evaluate = (subject: string, id: string) =>
      t
        .http("POST", "/vip/api/v1/policies/evaluate", { token: staff, body: { subject, resource: resource(id) } })
        .then((a) => expectStatus(a, 200).body);
    expect(await evaluate(plus, "plan")).toMatchObject({
      allowed: true,
      reason: "EVALUATE_REASON_MEMBER",
      entitlement: { creator: "network" },
    });
    expect(await evaluate(plain, "plan")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_PLAN_MISMATCH" });
    expect(await evaluate(plus, "perk")).toMatchObject({
      allowed: true,
      reason: "EVALUATE_REASON_MEMBER",
      entitlement: { source: "SOURCE_BILLING" },
    });
    expect(await evaluate(plain, "perk")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_PERK_MISSING" });
    expect(await evaluate(plain, "any")).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_MEMBER" });
    expect(await evaluate(none, "any")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_NOT_MEMBER" });
    // The member asks about themselves.
    expectStatus(
      await t.http("POST", "/vip/api/v1/policies/evaluate", {
        token: await userToken(t, plus),
        body: { subject: plus, resource: resource("plan") },
      }),
      200,
    );

    expect(
      expectStatus(await t.http("DELETE", `/vip/api/v1/policies/${byPlan.id}`, { token: staff }), 200).body.policy.id,
    ).toBe(byPlan.id);
    expect(await evaluate(plain, "plan")).toEqual({ allowed: true, reason: "EVALUATE_REASON_NO_POLICY" });
  });

  it("is sold through an intent: once settled, billing's event makes the member; past valid_until plus grace the answer is unknown", async () => {
    const fan = person("fan");
    const before = await revenue();
    const answer = expectStatus(
      await checkout(fan, { plan_id: plan.id, paid_via: "PAID_VIA_INTENT", idempotency_key: "n2" }),
      201,
    ).body;
    expect(answer.membership).toMatchObject({ creator: "network", paid_via: "PAID_VIA_INTENT" });
    const order = new URL(answer.checkout_url).searchParams.get("order")!;
    const provider = testProvider(t);
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
    expect(await revenue()).toBe(before + 499n);
    const member = await until(
      () => check(fan, "CHECK_MODE_PROJECTION"),
      (a) => a.member,
    );
    expect(member).toMatchObject({ status: "ENTITLEMENT_STATUS_MEMBER", plan_id: plan.id, plan_version: "1" });

    clock.advance(30 * 86_400_000 + 3_600_000);
    expect(await check(fan)).toMatchObject({
      member: false,
      status: "ENTITLEMENT_STATUS_UNKNOWN",
      source: "SOURCE_BILLING",
    });
  });
});
