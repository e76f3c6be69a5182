import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { deliver, testProvider } from "../billing/payments.js";
import { fund } from "../billing/support.js";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, expectStatus, person, serviceToken, userToken, until } from "./support.js";

const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
// Billing's renewal sweep runs only when asked; events stay in this process (see access.test.ts).
const t = usePlatform({
  services: ["vip", "billing"],
  clock,
  env: {
    PF_BILLING_SWEEP_EVERY_MS: "2000000000",
    PF_VIP_ENTITLEMENT_GRACE_SECONDS: "3600",
    PF_VIP_PROJECTION_TTL_SECONDS: "60",
  },
});
const PRICE = "499"; // billing's tier_1
let creator: string;
let mine: string;
let staff: string;
let reader: string;

beforeAll(async () => {
  creator = person("cr");
  mine = await userToken(t, creator);
  staff = await serviceToken(t);
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

const credit = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances[0]?.spendable_credit;
const checkout = async (fan: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  t.http("POST", "/vip/api/v1/checkout", { token: await userToken(t, fan), body, headers });
const check = (subject: string, mode = "CHECK_MODE_AUTO", of = creator) =>
  t
    .http("GET", `/vip/api/v1/entitlements/check?subject=${subject}&creator=${of}&mode=${mode}`, { token: staff })
    .then((a) => expectStatus(a, 200).body);

/** A fan with credit, a member of `planId` from credit. */
async function memberFromCredit(planId: string, tag = "fan") {
  const fan = person(tag);
  await fund(t, fan, 10_000n);
  const answer = expectStatus(
    await checkout(fan, { plan_id: planId, paid_via: "PAID_VIA_CREDIT", idempotency_key: `k-${fan}` }),
    201,
  );
  return { fan, membership: answer.body.membership };
}

describe("checkout from credit", () => {
  it("records the plan version chosen, pays one period at billing's price, and makes a member at once", async () => {
    const perk = await createPerk(t, mine, { name: "Badge" });
    const plan = await createPlan(t, mine, { perk_ids: [perk.id], publish: true });
    const fan = person("fan");
    await fund(t, fan, 1_000n);
    const answer = expectStatus(
      await checkout(
        fan,
        {
          plan_id: plan.id,
          plan_version: 1,
          paid_via: "PAID_VIA_CREDIT",
          preferences: { announce: true, notifications: false },
        },
        { "idempotency-key": "first" },
      ),
      201,
    );
    const { membership } = answer.body;
    expect(answer.body.price).toEqual({ minor_units: PRICE, currency: "USD" });
    expect(membership).toMatchObject({
      member: fan,
      creator,
      plan_id: plan.id,
      paid_via: "PAID_VIA_CREDIT",
      preferences: { announce: true, notifications: false },
      plan_version: { version: "1", perks: [{ perk_id: perk.id, name: "Badge" }] },
      entitlement: {
        member: true,
        status: "ENTITLEMENT_STATUS_MEMBER",
        source: "SOURCE_BILLING",
        plan_id: plan.id,
        plan_version: "1",
      },
    });
    expect(membership.subscription_id).toMatch(/^sub_/);
    expect(await credit(fan)).toBe(String(1000 - Number(PRICE)));
    expect(await check(fan, "CHECK_MODE_PROJECTION")).toMatchObject({
      member: true,
      status: "ENTITLEMENT_STATUS_MEMBER",
      source: "SOURCE_PROJECTION",
    });

    // Idempotent: the same key answers the first checkout and charges nothing more; another body is refused.
    const again = expectStatus(
      await checkout(
        fan,
        {
          plan_id: plan.id,
          plan_version: 1,
          paid_via: "PAID_VIA_CREDIT",
          preferences: { announce: true, notifications: false },
        },
        { "idempotency-key": "first" },
      ),
      201,
    );
    expect(again.body.membership.id).toBe(membership.id);
    expect(await credit(fan)).toBe(String(1000 - Number(PRICE)));
    expectStatus(
      await checkout(fan, { plan_id: plan.id, paid_via: "PAID_VIA_INTENT" }, { "idempotency-key": "first" }),
      409,
      "idempotency.mismatch",
    );

    const status = expectStatus(
      await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: await userToken(t, fan) }),
      200,
    ).body;
    expect(status.memberships).toHaveLength(1);
    expect(status.memberships[0]).toMatchObject({
      id: membership.id,
      plan_version: { version: "1" },
      entitlement: { member: true },
    });
  });

  it("charges once for concurrent retries of one key", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const fan = person("fan");
    await fund(t, fan, 1_000n);
    const body = { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "same" };
    const answers = await Promise.all([checkout(fan, body), checkout(fan, body), checkout(fan, body)]);
    for (const answer of answers) expectStatus(answer, 201);
    expect(new Set(answers.map((a) => a.body.membership.id)).size).toBe(1);
    expect(await credit(fan)).toBe(String(1000 - Number(PRICE)));
  });

  it("creates one intent for concurrent retries of one key through a payment intent", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const fan = person("fan");
    const body = { plan_id: plan.id, paid_via: "PAID_VIA_INTENT", idempotency_key: "same-intent" };
    const answers = await Promise.all([checkout(fan, body), checkout(fan, body), checkout(fan, body)]);
    for (const answer of answers) expectStatus(answer, 201);
    expect(new Set(answers.map((a) => a.body.membership.id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.membership.intent_id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.checkout_url)).size).toBe(1);
  });

  it("refuses drafts, archived plans, one's own plan, a stale version, short credit, a price and a missing key", async () => {
    const fan = person("fan");
    const draft = await createPlan(t, mine);
    const body = (planId: string, extra: Record<string, unknown> = {}) => ({
      plan_id: planId,
      paid_via: "PAID_VIA_CREDIT",
      idempotency_key: `k${Math.random()}`,
      ...extra,
    });
    expectStatus(await checkout(fan, body(draft.id)), 404, "plan.not_found");
    const plan = await createPlan(t, mine, { publish: true });
    await t.http("PATCH", `/vip/api/v1/plans/${plan.id}`, { token: mine, body: { name: "Gold 2" } });
    const stale = expectStatus(await checkout(fan, body(plan.id, { plan_version: 1 })), 409, "plan.version_changed");
    expect(stale.body.current_version).toBe("2");
    expectStatus(await checkout(creator, body(plan.id)), 409, "checkout.own_plan");
    expectStatus(await checkout(fan, body(plan.id)), 409, "insufficient_funds");
    expect((await checkout(fan, body(plan.id, { price: { minor_units: "1", currency: "USD" } }))).body).toMatchObject({
      status: 400,
      code: "vip.price_refused",
    });
    expect((await checkout(fan, { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT" })).body).toMatchObject({
      status: 400,
      field: "idempotency_key",
    });
    expect((await checkout(fan, { plan_id: plan.id, idempotency_key: "x" })).body).toMatchObject({
      status: 400,
      field: "paid_via",
    });
    expect((await checkout(fan, body(plan.id, { plan_version: -1 }))).body).toMatchObject({
      status: 400,
      field: "plan_version",
    });
    const guest = await t.token({ kind: "user", sub: "gst_abc" });
    expectStatus(
      await t.http("POST", "/vip/api/v1/checkout", { token: guest, body: body(plan.id) }),
      403,
      "auth.member_required",
    );
    await t.http("POST", `/vip/api/v1/plans/${plan.id}/archive`, { token: mine, body: {} });
    expectStatus(await checkout(fan, body(plan.id)), 409, "plan.archived");
  });
});

describe("checkout through a payment intent", () => {
  it("answers billing's checkout URL; once the provider settles it, billing's event makes the projection say member", async () => {
    const plan = await createPlan(t, mine, { publish: true, tier: "tier_2" });
    const fan = person("fan");
    const answer = expectStatus(
      await checkout(fan, {
        plan_id: plan.id,
        paid_via: "PAID_VIA_INTENT",
        idempotency_key: "i1",
        return_url: "https://pf.example/back",
      }),
      201,
    );
    expect(answer.body.checkout_url).toMatch(/^https:\/\/checkout\.test-provider\.invalid\/pay\?order=/);
    expect(answer.body.price).toEqual({ minor_units: "999", currency: "USD" });
    expect(answer.body.membership).toMatchObject({
      paid_via: "PAID_VIA_INTENT",
      entitlement: { member: false, status: "ENTITLEMENT_STATUS_NOT_MEMBER" },
    });
    expect(answer.body.membership.intent_id).toMatch(/^pi_/);
    expect(await check(fan, "CHECK_MODE_PROJECTION")).toMatchObject({ member: false });

    const order = new URL(answer.body.checkout_url).searchParams.get("order")!;
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
    const projected = await until(
      () => check(fan, "CHECK_MODE_PROJECTION"),
      (a) => a.member,
    );
    expect(projected).toMatchObject({
      status: "ENTITLEMENT_STATUS_MEMBER",
      source: "SOURCE_PROJECTION",
      plan_id: plan.id,
      plan_version: "1",
    });
    expect(new Date(projected.valid_until).getTime()).toBe(clock.now().getTime() + 30 * 86_400_000);
  });
});

describe("archive", () => {
  it("stops new members while an existing member keeps their version and entitlement", async () => {
    const plan = await createPlan(t, mine, { publish: true, description: "v1 terms" });
    const { fan } = await memberFromCredit(plan.id);
    await t.http("PATCH", `/vip/api/v1/plans/${plan.id}`, { token: mine, body: { description: "v2 terms" } });
    expectStatus(await t.http("POST", `/vip/api/v1/plans/${plan.id}/archive`, { token: mine, body: {} }), 200);
    const newcomer = person("new");
    await fund(t, newcomer, 10_000n);
    expectStatus(
      await checkout(newcomer, { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "n" }),
      409,
      "plan.archived",
    );
    const [membership] = (await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: staff })).body.memberships;
    expect(membership).toMatchObject({
      plan_version: { version: "1", description: "v1 terms", state: "VERSION_STATE_SUPERSEDED" },
      entitlement: { member: true },
    });
    expect(await check(fan, "CHECK_MODE_AUTHORITATIVE")).toMatchObject({
      member: true,
      source: "SOURCE_BILLING",
      plan_version: "1",
    });
  });
});

describe("members and memberships", () => {
  it("lists a creator's members from billing, to the creator and the grant only", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const { fan } = await memberFromCredit(plan.id);
    for (const token of [mine, staff]) {
      const answer = expectStatus(await t.http("GET", `/vip/api/v1/creators/${creator}/members`, { token }), 200).body;
      expect(answer).toMatchObject({ creator, source: "SOURCE_BILLING" });
      expect(answer.members.map((m: { subject: string }) => m.subject)).toContain(fan);
    }
    const stranger = await userToken(t, person("st"));
    expectStatus(
      await t.http("GET", `/vip/api/v1/creators/${creator}/members`, { token: stranger }),
      403,
      "vip.forbidden",
    );
    expectStatus(await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: stranger }), 403, "vip.forbidden");
    expectStatus(
      await t.http("GET", `/vip/api/v1/entitlements/check?subject=${fan}&creator=${creator}`, { token: stranger }),
      403,
      "vip.forbidden",
    );
    // The member and the creator may check.
    expectStatus(
      await t.http("POST", "/vip/api/v1/entitlements/check", {
        token: await userToken(t, fan),
        body: { subject: fan, creator },
      }),
      200,
    );
    expectStatus(
      await t.http("POST", "/vip/api/v1/entitlements/check", { token: mine, body: { subject: fan, creator } }),
      200,
    );
  });
});

describe("memberships billing holds", () => {
  /** A channel subscription made at billing directly (billing's designed POST /subscriptions), never through this service. */
  async function subscribeAtBilling(fan: string, streamer: string, planId: string, planVersion = 1) {
    const manager = await t.token({ kind: "service", svc: "ops", caps: ["billing.subscription.manage"] });
    const body = {
      subject: fan,
      streamer,
      plan_id: planId,
      plan_version: planVersion,
      idempotency_key: `b-${fan}-${planId}-${planVersion}`,
    };
    return expectStatus(await t.http("POST", "/billing/api/v1/subscriptions", { token: manager, body }), 201).body
      .subscription;
  }
  const memberships = async (fan: string) =>
    expectStatus(await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: await userToken(t, fan) }), 200).body;

  it("answers a subscription made at billing directly, joined to the plan version it names, preferences off, labelled billing", async () => {
    const perk = await createPerk(t, mine, { name: "Direct badge" });
    const plan = await createPlan(t, mine, { perk_ids: [perk.id], publish: true });
    const network = await createPlan(t, staff, { owner: "network", name: "Network pass", publish: true });
    const fan = person("fan");
    await fund(t, fan, 10_000n);
    const sub = await subscribeAtBilling(fan, creator, plan.id);
    const networkSub = await subscribeAtBilling(fan, "network", network.id);
    const answer = await memberships(fan);
    expect(answer).toMatchObject({
      subject: fan,
      source: "SOURCE_BILLING",
      billing_unavailable: false,
      age_seconds: "0",
    });
    expect(answer.memberships).toHaveLength(2);
    const byCreator = (of: string) => answer.memberships.find((m: { creator: string }) => m.creator === of);
    expect(byCreator(creator)).toMatchObject({
      id: "",
      member: fan,
      origin: "MEMBERSHIP_ORIGIN_BILLING",
      plan_id: plan.id,
      subscription_id: sub.id,
      paid_via: "PAID_VIA_UNSPECIFIED",
      plan_version: { version: "1", perks: [{ perk_id: perk.id, name: "Direct badge" }] },
      preferences: { announce: false, notifications: false },
      entitlement: {
        member: true,
        status: "ENTITLEMENT_STATUS_MEMBER",
        source: "SOURCE_BILLING",
        plan_id: plan.id,
        plan_version: "1",
      },
    });
    expect(byCreator("network")).toMatchObject({
      origin: "MEMBERSHIP_ORIGIN_BILLING",
      plan_id: network.id,
      subscription_id: networkSub.id,
      plan_version: { version: "1" },
    });
  });

  it("shows one membership per subscription: a checkout billing names once, a plan changed at billing as billing's with the checkout's preferences", async () => {
    const planA = await createPlan(t, mine, { name: "A", publish: true });
    const planB = await createPlan(t, mine, { name: "B", publish: true });
    const fan = person("fan");
    await fund(t, fan, 10_000n);
    const preferences = { announce: true, notifications: true };
    const { membership } = expectStatus(
      await checkout(fan, { plan_id: planA.id, paid_via: "PAID_VIA_CREDIT", preferences, idempotency_key: "a" }),
      201,
    ).body;
    const first = await memberships(fan);
    expect(first.memberships).toHaveLength(1);
    expect(first.memberships[0]).toMatchObject({
      id: membership.id,
      origin: "MEMBERSHIP_ORIGIN_CHECKOUT",
      subscription_id: membership.subscription_id,
    });

    // Billing keeps one subscription per channel: subscribed to B at billing, the same subscription now names B.
    const changed = await subscribeAtBilling(fan, creator, planB.id);
    expect(changed.id).toBe(membership.subscription_id);
    const after = await memberships(fan);
    expect(after.memberships).toHaveLength(1);
    expect(after.memberships[0]).toMatchObject({
      id: "",
      origin: "MEMBERSHIP_ORIGIN_BILLING",
      plan_id: planB.id,
      plan_version: { name: "B" },
      subscription_id: changed.id,
      preferences,
      entitlement: { member: true, plan_id: planB.id },
    });
    // A plan id billing holds that is not this channel's plan is not joined.
    const strangers = await createPlan(t, await userToken(t, person("cr")), { publish: true });
    await subscribeAtBilling(fan, creator, strangers.id);
    const foreign = (await memberships(fan)).memberships;
    expect(foreign).toHaveLength(1);
    expect(foreign[0]).toMatchObject({ origin: "MEMBERSHIP_ORIGIN_BILLING", plan_id: strangers.id });
    expect(foreign[0].plan_version).toBeUndefined();
  });
});

describe("entitlement modes", () => {
  /** Billing ends a subscription without its event reaching this service (as if the event were still on its way). */
  const endQuietly = (subscriptionId: string) =>
    t.platform.contexts
      .get("billing")!
      .orm.em.getConnection()
      .execute(`update billing.subscriptions set status = 'ended', ended_at = ?, valid_until = ? where id = ?`, [
        clock.now(),
        clock.now(),
        subscriptionId,
      ]);

  it("authoritative always asks billing; projection and a fresh auto do not", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const { fan, membership } = await memberFromCredit(plan.id);
    await endQuietly(membership.subscription_id);
    expect(await check(fan, "CHECK_MODE_PROJECTION")).toMatchObject({ member: true, source: "SOURCE_PROJECTION" });
    expect(await check(fan, "CHECK_MODE_AUTO")).toMatchObject({ member: true, source: "SOURCE_PROJECTION" });
    expect(await check(fan, "CHECK_MODE_AUTHORITATIVE")).toMatchObject({
      member: false,
      status: "ENTITLEMENT_STATUS_NOT_MEMBER",
      source: "SOURCE_BILLING",
    });
    // What billing said is now the projection's.
    expect(await check(fan, "CHECK_MODE_PROJECTION")).toMatchObject({
      member: false,
      status: "ENTITLEMENT_STATUS_NOT_MEMBER",
    });
  });

  it("auto asks billing once the projection is older than the TTL", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const { fan, membership } = await memberFromCredit(plan.id);
    await endQuietly(membership.subscription_id);
    clock.advance(61_000);
    expect(await check(fan, "CHECK_MODE_PROJECTION")).toMatchObject({ member: true, source: "SOURCE_PROJECTION" });
    expect(await check(fan, "CHECK_MODE_AUTO")).toMatchObject({ member: false, source: "SOURCE_BILLING" });
  });

  it("refuses a malformed check (400 naming the field)", async () => {
    expect(
      (await t.http("GET", `/vip/api/v1/entitlements/check?subject=bob&creator=${creator}`, { token: staff })).body,
    ).toMatchObject({ status: 400, field: "subject" });
    expect(
      (await t.http("GET", "/vip/api/v1/entitlements/check?subject=usr_a&creator=x", { token: staff })).body,
    ).toMatchObject({ status: 400, field: "creator" });
  });
});

// Last: it moves the clock a period on.
describe("past valid_until", () => {
  it("a member is in grace, then unknown past grace (never authorizing), and a policy evaluation refuses", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const { fan } = await memberFromCredit(plan.id);
    const resource = { service: "vip", kind: "plan", id: plan.id };
    expectStatus(
      await t.http("POST", "/vip/api/v1/policies", { token: mine, body: { resource, rule: "POLICY_RULE_ANY_MEMBER" } }),
      201,
    );
    const evaluate = () =>
      t
        .http("POST", "/vip/api/v1/policies/evaluate", { token: staff, body: { subject: fan, resource } })
        .then((a) => expectStatus(a, 200).body);
    expect(await evaluate()).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_MEMBER" });

    clock.advance(30 * 86_400_000 + 30 * 60_000);
    expect(await check(fan, "CHECK_MODE_PROJECTION")).toMatchObject({
      member: true,
      status: "ENTITLEMENT_STATUS_IN_GRACE",
    });
    expect(await check(fan, "CHECK_MODE_AUTO")).toMatchObject({
      member: true,
      status: "ENTITLEMENT_STATUS_IN_GRACE",
      source: "SOURCE_BILLING",
    });

    clock.advance(60 * 60_000);
    const unknown = await check(fan, "CHECK_MODE_AUTO");
    expect(unknown).toMatchObject({ member: false, status: "ENTITLEMENT_STATUS_UNKNOWN", source: "SOURCE_BILLING" });
    expect(new Date(unknown.grace_until).getTime()).toBe(new Date(unknown.valid_until).getTime() + 3_600_000);
    expect(await evaluate()).toMatchObject({
      allowed: false,
      reason: "EVALUATE_REASON_UNKNOWN",
      entitlement: { status: "ENTITLEMENT_STATUS_UNKNOWN" },
    });
  });
});
