import { describe, expect, it } from "vitest";
import { Actor, Visibility } from "../../gen/pf/v1/options_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { expectStatus, person, serviceToken, userToken } from "./support.js";

// A resource vip holds itself (a plan), so setting its rule asks no other service.
const resource = { service: "vip", kind: "plan", id: "pln_1" };

/** One valid call per membership route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  createCheckout: {
    method: "POST",
    path: "/vip/api/v1/checkout",
    body: { plan_id: "pln_1", paid_via: "PAID_VIA_CREDIT", idempotency_key: "k1" },
  },
  getCreator: { method: "GET", path: "/vip/api/v1/creators/usr_c1" },
  listMembers: { method: "GET", path: "/vip/api/v1/creators/usr_c1/members" },
  checkEntitlement: { method: "GET", path: "/vip/api/v1/entitlements/check?subject=usr_a1&creator=usr_c1" },
  postEntitlementCheck: {
    method: "POST",
    path: "/vip/api/v1/entitlements/check",
    body: { subject: "usr_a1", creator: "usr_c1" },
  },
  getMemberships: { method: "GET", path: "/vip/api/v1/memberships/usr_a1" },
  listPerks: { method: "GET", path: "/vip/api/v1/perks" },
  createPerk: { method: "POST", path: "/vip/api/v1/perks", body: { kind: "PERK_KIND_BADGE", name: "Badge" } },
  updatePerk: { method: "PATCH", path: "/vip/api/v1/perks/prk_1", body: { name: "Badge" } },
  listPlans: { method: "GET", path: "/vip/api/v1/plans" },
  createPlan: { method: "POST", path: "/vip/api/v1/plans", body: { name: "Gold" } },
  getPlan: { method: "GET", path: "/vip/api/v1/plans/pln_1" },
  updatePlan: { method: "PATCH", path: "/vip/api/v1/plans/pln_1", body: { name: "Gold" } },
  archivePlan: { method: "POST", path: "/vip/api/v1/plans/pln_1/archive", body: {} },
  publishPlan: { method: "POST", path: "/vip/api/v1/plans/pln_1/publish", body: {} },
  listPlanVersions: { method: "GET", path: "/vip/api/v1/plans/pln_1/versions" },
  listPolicies: { method: "GET", path: "/vip/api/v1/policies" },
  setPolicy: {
    method: "POST",
    path: "/vip/api/v1/policies",
    body: { creator: "usr_c1", resource, rule: "POLICY_RULE_ANY_MEMBER" },
  },
  getPolicy: { method: "GET", path: "/vip/api/v1/policies/pol_1" },
  deletePolicy: { method: "DELETE", path: "/vip/api/v1/policies/pol_1" },
  evaluatePolicy: { method: "POST", path: "/vip/api/v1/policies/evaluate", body: { subject: "usr_a1", resource } },
};

const routes = routesOf(VipService);
// The in-process bus: a durable consumer's name is shared by every platform on one NATS server.
const t = usePlatform({ services: ["vip"] });

describe("every membership route", () => {
  it("has a call here", () => {
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  it("has the 21 routes", () => {
    expect(routes).toHaveLength(21);
  });

  itWithSpec("matches routes.tsv exactly (21 routes: method, path, capability, visibility)", "vip", (documented) => {
    expect(documented).toHaveLength(21);
    const bound = routes.map(bindingOf);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });

  it("serves the public reads to anonymous callers, and only those", async () => {
    for (const name of ["getCreator", "listPerks", "listPlans", "getPlan", "listPlanVersions"]) {
      const route = routes.find((r) => r.name === name)!;
      expect(route.rule.anonymous, name).toBe(true);
      const answer = await t.http(calls[name].method, calls[name].path);
      expect(String(answer.body?.code ?? ""), name).not.toMatch(/^auth\./);
      expect(answer.status, name).toBeLessThan(500);
    }
    expect(routes.filter((route) => route.rule.anonymous)).toHaveLength(5);
    expect((await t.http("GET", "/vip/api/v1/plans")).body).toEqual({
      plans: { creator: "", plans: [], next_cursor: "" },
    });
  });

  it("refuses X-PF-Staff and X-PF-Subject from anonymous callers on public reads (403 auth.header_refused)", async () => {
    const answer = await t.http("GET", "/vip/api/v1/plans", { headers: { "x-pf-staff": "1" } });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.header_refused" });
  });
});

describe("declared people and staff", () => {
  it("first-party routes admit by the staff rule, then the person rule; checkout admits a member", () => {
    for (const { name, rule } of routes.filter((route) => route.rule.visibility === Visibility.FIRST_PARTY)) {
      if (name === "createCheckout") {
        expect(rule.actor, name).toBe(Actor.MEMBER);
        continue;
      }
      const shape = (r: typeof rule) => ({
        name: r.name,
        actor: r.actor,
        visibility: r.visibility,
        caps: r.capabilities,
      });
      expect(shape(rule), name).toEqual({ ...shape(rule), name: "staff", actor: Actor.STAFF });
      expect(rule.alternatives.map(shape), name).toEqual([{ ...shape(rule), name: "person", actor: Actor.PERSON }]);
    }
  });

  it("network plans are staff's: a service acting for a person it does not vouch as staff gets the person's", async () => {
    const staff = await serviceToken(t);
    const someone = person("st");
    const create = (headers: Record<string, string>, owner = "network") =>
      t.http("POST", "/vip/api/v1/plans", { token: staff, headers, body: { name: "Net", owner } });
    expectStatus(await create({ "x-pf-subject": someone }), 403, "vip.not_owner");
    const plan = expectStatus(await create({ "x-pf-subject": someone, "x-pf-staff": "1" }), 201).body.plan;
    expect(plan).toMatchObject({ owner: "network", draft_version: { created_by: someone } });
    // Vouched as staff, the person still makes their own plans as themselves.
    const own = expectStatus(await create({ "x-pf-subject": someone, "x-pf-staff": "1" }, ""), 201).body.plan;
    expect(own.owner).toBe(someone);
    // Acting for nobody, the service is staff: it makes the network's plans, no creator's.
    expectStatus(await create({}, ""), 403, "vip.not_owner");
    expectStatus(await create({}, someone), 403, "vip.not_owner");
  });

  it("checkout needs a member: a guest, or a service acting for nobody, is refused (auth.member_required)", async () => {
    const staff = await serviceToken(t);
    const body = { plan_id: "pln_1", paid_via: "PAID_VIA_CREDIT", idempotency_key: "k1" };
    expectStatus(await t.http("POST", "/vip/api/v1/checkout", { token: staff, body }), 403, "auth.member_required");
    const headers = { "x-pf-subject": "gst_g1" };
    expectStatus(
      await t.http("POST", "/vip/api/v1/checkout", { token: staff, body, headers }),
      403,
      "auth.member_required",
    );
  });

  it("person-scoped reads: the person named, or the grant (staff), never another person", async () => {
    const staff = await serviceToken(t);
    const [fan, other] = [person("fan"), person("other")];
    const path = `/vip/api/v1/entitlements/check?subject=${fan}&creator=${other}&mode=CHECK_MODE_PROJECTION`;
    const check = (token: string, headers: Record<string, string> = {}) => t.http("GET", path, { token, headers });
    expectStatus(await check(await userToken(t, fan)), 200);
    expectStatus(await check(await userToken(t, person("stranger"))), 403, "vip.forbidden");
    expectStatus(await check(staff, { "x-pf-subject": person("stranger") }), 403, "vip.forbidden");
    expectStatus(await check(staff, { "x-pf-subject": person("stranger"), "x-pf-staff": "1" }), 200);
    expectStatus(await check(staff), 200);
  });
});

describe("limit", () => {
  it("is 1–200: 0 and 201 are 400 naming limit", async () => {
    const token = await userToken(t, person());
    for (const path of ["/plans?limit=0", "/policies?limit=0", "/perks?limit=201"]) {
      const answer = await t.http("GET", `/vip/api/v1${path}`, { token });
      expect(answer.body, path).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
    }
    expectStatus(await t.http("GET", "/vip/api/v1/plans?limit=1", { token }), 200);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
