import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { fund } from "../billing/support.js";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, expectStatus, goalResource, person, serviceToken, userToken } from "./support.js";

const clock = new ManualClock(new Date("2026-04-01T00:00:00Z"));
// Tips holds the goals the rules gate: vip confirms each goal's owner with it.
const t = usePlatform({
  services: ["vip", "billing", "tips"],
  clock,
  env: { PF_BILLING_SWEEP_EVERY_MS: "2000000000" },
});

let creator: string;
let mine: string;
let theirs: string;
let staff: string;
let planA: { id: string };
let planB: { id: string };
let perk: { id: string };
const fans: Record<"a" | "b" | "none", string> = { a: "", b: "", none: "" };

type Resource = { service: string; kind: string; id: string };
/** The creator's resources the rules gate, by name: tips goals, and one of the creator's vip plans. */
const gated: Record<string, Resource> = {};
const resource = (name: string) => gated[name];
const setPolicy = (body: Record<string, unknown>, token = mine) =>
  t.http("POST", "/vip/api/v1/policies", { token, body });
const evaluate = (subject: string, id: string) =>
  t
    .http("POST", "/vip/api/v1/policies/evaluate", { token: staff, body: { subject, resource: resource(id) } })
    .then((a) => expectStatus(a, 200).body);

async function join(planId: string) {
  const fan = person("fan");
  await fund(t, fan, 5_000n);
  const answer = await t.http("POST", "/vip/api/v1/checkout", {
    token: await userToken(t, fan),
    body: { plan_id: planId, paid_via: "PAID_VIA_CREDIT", idempotency_key: fan },
  });
  return { fan, subscription: expectStatus(answer, 201).body.membership.subscription_id as string };
}

beforeAll(async () => {
  creator = person("cr");
  mine = await userToken(t, creator);
  theirs = await userToken(t, person("ot"));
  staff = await serviceToken(t);
  perk = await createPerk(t, mine, { kind: "PERK_KIND_ROOM", name: "Backstage" });
  planA = await createPlan(t, mine, { name: "A", perk_ids: [perk.id], publish: true });
  planB = await createPlan(t, mine, { name: "B", publish: true });
  for (const name of ["any", "plan", "perk", "open", "secret", "taken", "x", "by-staff"])
    gated[name] = await goalResource(t, mine);
  gated.r = { service: "vip", kind: "plan", id: planB.id };
  fans.a = (await join(planA.id)).fan;
  fans.none = person("none");
});

describe("rule kinds", () => {
  it("any member: members of any plan; not a non-member; always the creator", async () => {
    fans.b = (await join(planB.id)).fan;
    const set = expectStatus(await setPolicy({ resource: resource("any"), rule: "POLICY_RULE_ANY_MEMBER" }), 201).body
      .policy;
    expect(set).toMatchObject({
      creator,
      resource: resource("any"),
      rule: "POLICY_RULE_ANY_MEMBER",
      always_check_billing: false,
      set_by: creator,
    });
    expect(await evaluate(fans.a, "any")).toMatchObject({
      allowed: true,
      reason: "EVALUATE_REASON_MEMBER",
      policy: { id: set.id },
    });
    expect(await evaluate(fans.b, "any")).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_MEMBER" });
    expect(await evaluate(fans.none, "any")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_NOT_MEMBER" });
    expect(await evaluate(creator, "any")).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_OWNER" });
  });

  it("members of one plan", async () => {
    expectStatus(
      await setPolicy({ resource: resource("plan"), rule: "POLICY_RULE_PLAN_MEMBER", plan_id: planA.id }),
      201,
    );
    expect(await evaluate(fans.a, "plan")).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_MEMBER" });
    expect(await evaluate(fans.b, "plan")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_PLAN_MISMATCH" });
  });

  it("members whose plan version includes a perk, by the version's snapshot (kept after the perk retires)", async () => {
    expectStatus(
      await setPolicy({ resource: resource("perk"), rule: "POLICY_RULE_PERK_HOLDER", perk_id: perk.id }),
      201,
    );
    expect(await evaluate(fans.a, "perk")).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_MEMBER" });
    expect(await evaluate(fans.b, "perk")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_PERK_MISSING" });
    // Plan B's next version includes the perk: B's earlier member keeps the version they joined (without it), a new member has it.
    expectStatus(
      await t.http("PATCH", `/vip/api/v1/plans/${planB.id}`, { token: mine, body: { perks: { perk_ids: [perk.id] } } }),
      200,
    );
    expect(await evaluate(fans.b, "perk")).toMatchObject({
      allowed: false,
      reason: "EVALUATE_REASON_PERK_MISSING",
      entitlement: { plan_version: "1" },
    });
    const { fan: joinedV2 } = await join(planB.id);
    expect(await evaluate(joinedV2, "perk")).toMatchObject({
      allowed: true,
      reason: "EVALUATE_REASON_MEMBER",
      entitlement: { plan_version: "2" },
    });
    await t.http("PATCH", `/vip/api/v1/perks/${perk.id}`, { token: mine, body: { retired: true } });
    expect(await evaluate(fans.a, "perk")).toMatchObject({ allowed: true });
  });

  it("always check with billing: a sensitive rule asks billing even when the projection is fresh", async () => {
    const { fan, subscription } = await join(planB.id);
    expectStatus(await setPolicy({ resource: resource("open"), rule: "POLICY_RULE_ANY_MEMBER" }), 201);
    expectStatus(
      await setPolicy({ resource: resource("secret"), rule: "POLICY_RULE_ANY_MEMBER", always_check_billing: true }),
      201,
    );
    // Billing ends it; its event has not reached this service.
    await t.platform.contexts
      .get("billing")!
      .orm.em.getConnection()
      .execute(`update billing.subscriptions set status = 'ended', ended_at = ?, valid_until = ? where id = ?`, [
        clock.now(),
        clock.now(),
        subscription,
      ]);
    expect(await evaluate(fan, "open")).toMatchObject({ allowed: true, entitlement: { source: "SOURCE_PROJECTION" } });
    expect(await evaluate(fan, "secret")).toMatchObject({
      allowed: false,
      reason: "EVALUATE_REASON_NOT_MEMBER",
      entitlement: { source: "SOURCE_BILLING" },
    });
  });
});

describe("setting, reading and removing rules", () => {
  it("replaces the rule of a resource (200, same id), reads and lists it, removes it (then the resource is not gated)", async () => {
    const first = expectStatus(await setPolicy({ resource: resource("r"), rule: "POLICY_RULE_ANY_MEMBER" }), 201).body
      .policy;
    const replaced = expectStatus(
      await setPolicy({ resource: resource("r"), rule: "POLICY_RULE_PLAN_MEMBER", plan_id: planB.id }),
      200,
    ).body.policy;
    expect(replaced).toMatchObject({ id: first.id, rule: "POLICY_RULE_PLAN_MEMBER", plan_id: planB.id });
    expect(await evaluate(fans.a, "r")).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_PLAN_MISMATCH" });

    expect(
      expectStatus(await t.http("GET", `/vip/api/v1/policies/${first.id}`, { token: mine }), 200).body.policy,
    ).toEqual(replaced);
    expectStatus(await t.http("GET", `/vip/api/v1/policies/${first.id}`, { token: staff }), 200);
    expectStatus(await t.http("GET", `/vip/api/v1/policies/${first.id}`, { token: theirs }), 404, "policy.not_found");
    const own = (await t.http("GET", "/vip/api/v1/policies", { token: mine })).body.policies.policies;
    expect(own.map((p: { id: string }) => p.id)).toContain(first.id);
    expect((await t.http("GET", "/vip/api/v1/policies", { token: theirs })).body.policies.policies).toEqual([]);
    expectStatus(
      await t.http("GET", `/vip/api/v1/policies?creator=${creator}`, { token: theirs }),
      403,
      "vip.forbidden",
    );
    const byStaff = (await t.http("GET", `/vip/api/v1/policies?creator=${creator}`, { token: staff })).body.policies
      .policies;
    expect(byStaff.map((p: { id: string }) => p.id)).toContain(first.id);

    expectStatus(
      await t.http("DELETE", `/vip/api/v1/policies/${first.id}`, { token: theirs }),
      404,
      "policy.not_found",
    );
    expect(
      (await t.http("DELETE", `/vip/api/v1/policies/${first.id}?rule=POLICY_RULE_ANY_MEMBER`, { token: mine })).body,
    ).toMatchObject({ status: 400, field: "rule" });
    expect(
      expectStatus(await t.http("DELETE", `/vip/api/v1/policies/${first.id}`, { token: mine }), 200).body.policy.id,
    ).toBe(first.id);
    expectStatus(await t.http("GET", `/vip/api/v1/policies/${first.id}`, { token: mine }), 404, "policy.not_found");
    expect(await evaluate(fans.none, "r")).toEqual({ allowed: true, reason: "EVALUATE_REASON_NO_POLICY" });
  });

  it("refuses another creator's resource (403), foreign plans and perks (422), fields the rule does not use (400)", async () => {
    expectStatus(await setPolicy({ resource: resource("taken"), rule: "POLICY_RULE_ANY_MEMBER" }), 201);
    expectStatus(
      await setPolicy({ resource: resource("taken"), rule: "POLICY_RULE_ANY_MEMBER" }, theirs),
      403,
      "vip.not_owner",
    );
    expect(await evaluate(creator, "taken")).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_OWNER" });
    expectStatus(
      await setPolicy({ resource: resource("x"), rule: "POLICY_RULE_ANY_MEMBER", creator }, theirs),
      403,
      "vip.not_owner",
    );
    // On their own goal, the other creator still names no plan of theirs.
    const ownGoal = await goalResource(t, theirs);
    expect(
      (await setPolicy({ resource: ownGoal, rule: "POLICY_RULE_PLAN_MEMBER", plan_id: planA.id }, theirs)).body,
    ).toMatchObject({ status: 422, field: "plan_id" });
    expect(
      (await setPolicy({ resource: resource("x"), rule: "POLICY_RULE_PERK_HOLDER", perk_id: "prk_none" })).body,
    ).toMatchObject({ status: 422, field: "perk_id" });
    expect(
      (await setPolicy({ resource: resource("x"), rule: "POLICY_RULE_ANY_MEMBER", plan_id: planA.id })).body,
    ).toMatchObject({ status: 400, field: "plan_id" });
    expect((await setPolicy({ resource: resource("x"), rule: "POLICY_RULE_PLAN_MEMBER" })).body).toMatchObject({
      status: 400,
      field: "plan_id",
    });
    expect((await setPolicy({ resource: resource("x") })).body).toMatchObject({ status: 400, field: "rule" });
    expect((await setPolicy({ rule: "POLICY_RULE_ANY_MEMBER" })).body).toMatchObject({
      status: 400,
      field: "resource",
    });
    expect(
      (await setPolicy({ resource: { service: "tips", kind: "goal" }, rule: "POLICY_RULE_ANY_MEMBER" })).body,
    ).toMatchObject({ status: 400, field: "resource.id" });
    // Staff set a creator's rule by naming the creator.
    expectStatus(
      await setPolicy({ resource: resource("by-staff"), rule: "POLICY_RULE_ANY_MEMBER", creator }, staff),
      201,
    );
    // Evaluation: people ask about themselves only.
    const stranger = await userToken(t, person("st"));
    expectStatus(
      await t.http("POST", "/vip/api/v1/policies/evaluate", {
        token: stranger,
        body: { subject: fans.a, resource: resource("any") },
      }),
      403,
      "vip.forbidden",
    );
  });
});
