import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { fund } from "../billing/support.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { createPerk, createPlan, expectStatus, person, serviceToken, userToken } from "./support.js";

// Billing in a process of its own, reached over gRPC through a proxy the test cuts: billing really stops answering.
const clock = new ManualClock(new Date("2026-05-01T00:00:00Z"));
let billing: TestPlatform;
let proxy: TcpProxy;
let t: TestPlatform;

beforeAll(async () => {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { NATS_URL: "", PF_JWT_PRIVATE_KEY: key };
  billing = await startTestPlatform({
    services: ["billing"],
    clock,
    env: { ...shared, PF_BILLING_SWEEP_EVERY_MS: "2000000000" },
  });
  const rpc = new URL(billing.platform.rpcUrl);
  proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
  await proxy.open();
  t = await startTestPlatform({
    services: ["vip"],
    clock,
    env: { ...shared, PF_BILLING_URL: `http://127.0.0.1:${proxy.port}`, PF_VIP_BILLING_TIMEOUT_MS: "1000" },
  });
});
afterAll(async () => {
  await t?.stop();
  await proxy?.cut();
  await billing?.stop();
});

describe("when billing does not answer", () => {
  it("lists members from the projection, labelled with its age; checks fall back or answer unknown", async () => {
    const creator = person("cr");
    const mine = await userToken(t, creator);
    const staff = await serviceToken(t);
    const plan = await createPlan(t, mine, { publish: true });
    const fan = person("fan");
    await fund(billing, fan, 2_000n);
    const bought = expectStatus(
      await t.http("POST", "/vip/api/v1/checkout", {
        token: await userToken(t, fan),
        body: { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "c1" },
      }),
      201,
    ).body;
    expect(bought.membership.entitlement).toMatchObject({ member: true, source: "SOURCE_BILLING" });
    // Another member this service never saw: subscribed at billing directly, its event on billing's own bus.
    const direct = person("direct");
    await fund(billing, direct, 2_000n);
    const manager = await billing.token({ kind: "service", svc: "ops", caps: ["billing.subscription.manage"] });
    expectStatus(
      await billing.http("POST", "/billing/api/v1/subscriptions", {
        token: manager,
        body: { subject: direct, streamer: creator, plan_id: plan.id, plan_version: 1, idempotency_key: "d1" },
      }),
      201,
    );
    const members = () =>
      t.http("GET", `/vip/api/v1/creators/${creator}/members`, { token: mine }).then((a) => expectStatus(a, 200).body);
    const subjects = (answer: { members: { subject: string }[] }) => answer.members.map((m) => m.subject).sort();
    const up = await members();
    expect(up).toMatchObject({ source: "SOURCE_BILLING", age_seconds: "0" });
    expect(subjects(up)).toEqual([fan, direct].sort());

    // The creator's own plan and perk, which vip holds: gating them asks no other service.
    const sensitive = { service: "vip", kind: "plan", id: plan.id };
    const ordinary = { service: "vip", kind: "perk", id: (await createPerk(t, mine)).id };
    expectStatus(
      await t.http("POST", "/vip/api/v1/policies", {
        token: mine,
        body: { resource: sensitive, rule: "POLICY_RULE_ANY_MEMBER", always_check_billing: true },
      }),
      201,
    );
    expectStatus(
      await t.http("POST", "/vip/api/v1/policies", {
        token: mine,
        body: { resource: ordinary, rule: "POLICY_RULE_ANY_MEMBER" },
      }),
      201,
    );

    await proxy.cut();
    clock.advance(90_000);
    const down = await members();
    expect(down).toMatchObject({ creator, source: "SOURCE_PROJECTION" });
    // Billing's last list refreshed the projection: the member it never heard of by event is there too.
    expect(subjects(down)).toEqual([fan, direct].sort());
    expect(down.members.find((m: { subject: string }) => m.subject === fan)).toMatchObject({
      plan_id: plan.id,
      plan_version: "1",
      subscription_id: bought.membership.subscription_id,
    });
    expect(Number(down.age_seconds)).toBe(90);
    expect(new Date(down.as_of).getTime()).toBe(clock.now().getTime() - 90_000);

    const check = (mode: string) =>
      t
        .http("GET", `/vip/api/v1/entitlements/check?subject=${fan}&creator=${creator}&mode=${mode}`, { token: staff })
        .then((a) => expectStatus(a, 200).body);
    // Auto with a stale projection asks billing, which does not answer: the projection answers, saying so.
    expect(await check("CHECK_MODE_AUTO")).toMatchObject({
      member: true,
      source: "SOURCE_PROJECTION",
      billing_unavailable: true,
    });
    // Authoritative must hear billing: without it the answer is unknown, which never authorizes.
    expect(await check("CHECK_MODE_AUTHORITATIVE")).toMatchObject({
      member: false,
      status: "ENTITLEMENT_STATUS_UNKNOWN",
      billing_unavailable: true,
    });
    // Someone the projection never heard of: billing may hold their entitlement, so the answer is unknown, not "not a member".
    const stranger = person("st");
    expect(
      await t
        .http("GET", `/vip/api/v1/entitlements/check?subject=${stranger}&creator=${creator}`, { token: staff })
        .then((a) => expectStatus(a, 200).body),
    ).toMatchObject({ member: false, status: "ENTITLEMENT_STATUS_UNKNOWN", billing_unavailable: true });
    // The memberships read says billing did not answer, too.
    const status = expectStatus(await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: staff }), 200).body;
    expect(status.memberships[0].entitlement).toMatchObject({
      member: true,
      source: "SOURCE_PROJECTION",
      billing_unavailable: true,
    });
    // The member subscribed at billing directly, known from billing's last list: a membership from the projection, labelled so.
    const directly = expectStatus(await t.http("GET", `/vip/api/v1/memberships/${direct}`, { token: staff }), 200).body;
    expect(directly).toMatchObject({ source: "SOURCE_PROJECTION", billing_unavailable: true, age_seconds: "90" });
    expect(directly.memberships).toHaveLength(1);
    expect(directly.memberships[0]).toMatchObject({
      origin: "MEMBERSHIP_ORIGIN_BILLING",
      creator,
      plan_id: plan.id,
      plan_version: { version: "1" },
      entitlement: { member: true },
    });
    const evaluate = (resource: object) =>
      t
        .http("POST", "/vip/api/v1/policies/evaluate", { token: staff, body: { subject: fan, resource } })
        .then((a) => expectStatus(a, 200).body);
    expect(await evaluate(sensitive)).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_UNKNOWN" });
    expect(await evaluate(ordinary)).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_MEMBER" });
    // A checkout needs billing: 503, nothing recorded.
    const refused = await t.http("POST", "/vip/api/v1/checkout", {
      token: await userToken(t, fan),
      body: { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "c2" },
    });
    expectStatus(refused, 503, "billing.unavailable");

    await proxy.open();
    expect((await members()).source).toBe("SOURCE_BILLING");
  });
});
