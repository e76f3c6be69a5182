import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/clock.js";
import { deliver, testProvider } from "../billing/payments.js";
import { billingOf, fund } from "../billing/support.js";
import { usePlatform } from "../support/platform.js";
import { createPlan, expectStatus, person, serviceToken, userToken, until } from "./support.js";

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

const checkout = async (fan: string, body: Record<string, unknown>) => t.http("POST", "/vip/api/v1/checkout", { token: await userToken(t, fan), body });
const check = (subject: string, mode = "CHECK_MODE_AUTO") =>
  t.http("GET", `/vip/api/v1/entitlements/check?subject=${subject}&creator=network&mode=${mode}`, { token: staff }).then((a) => expectStatus(a, 200).body);

/** The platform's revenue in USD (network plans are paid there, not to a person). */
async function revenue(): Promise<bigint> {
  const [row] = await billingOf(t).orm.em.getConnection().execute<{ balance: string }[]>(
    `select balance from billing.accounts where owner = 'platform' and kind = 'revenue' and currency = 'USD'`,
  );
  return BigInt(row?.balance ?? 0);
}

describe("a network plan", () => {
  it("is sold from credit through billing's network channel, pays the platform's revenue, and entitles", async () => {
    const fan = person("fan");
    await fund(t, fan, 1_000n);
    const before = await revenue();
    const answer = expectStatus(await checkout(fan, { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "n1" }), 201).body;
    expect(answer.price).toEqual({ minor_units: "499", currency: "USD" });
    expect(answer.membership).toMatchObject({
      member: fan, creator: "network", plan_id: plan.id, plan_version: { version: "1" },
      entitlement: { member: true, status: "ENTITLEMENT_STATUS_MEMBER", source: "SOURCE_BILLING", creator: "network" },
    });
    expect(await revenue()).toBe(before + 499n);
    expect(await check(fan, "CHECK_MODE_AUTHORITATIVE")).toMatchObject({ member: true, plan_id: plan.id, source: "SOURCE_BILLING" });
    const members = expectStatus(await t.http("GET", "/vip/api/v1/creators/network/members", { token: staff }), 200).body;
    expect(members.members.map((m: { subject: string }) => m.subject)).toContain(fan);
    // Only the grant reads the network's members; a person is refused.
    expectStatus(await t.http("GET", "/vip/api/v1/creators/network/members", { token: await userToken(t, fan) }), 403, "vip.forbidden");
  });

  it("is sold through an intent: once settled, billing's event makes the member; past valid_until plus grace the answer is unknown", async () => {
    const fan = person("fan");
    const before = await revenue();
    const answer = expectStatus(await checkout(fan, { plan_id: plan.id, paid_via: "PAID_VIA_INTENT", idempotency_key: "n2" }), 201).body;
    expect(answer.membership).toMatchObject({ creator: "network", paid_via: "PAID_VIA_INTENT" });
    const order = new URL(answer.checkout_url).searchParams.get("order")!;
    const provider = testProvider(t);
    provider.approve(order);
    await provider.captureOrder(order);
    expect((await deliver(t, provider.deliveries(order).find((d) => d.type === "payment.captured")!)).body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");
    expect(await revenue()).toBe(before + 499n);
    const member = await until(() => check(fan, "CHECK_MODE_PROJECTION"), (a) => a.member);
    expect(member).toMatchObject({ status: "ENTITLEMENT_STATUS_MEMBER", plan_id: plan.id, plan_version: "1" });

    clock.advance(30 * 86_400_000 + 3_600_000);
    expect(await check(fan)).toMatchObject({ member: false, status: "ENTITLEMENT_STATUS_UNKNOWN", source: "SOURCE_BILLING" });
  });
});
