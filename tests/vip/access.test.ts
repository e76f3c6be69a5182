import { describe, expect, it } from "vitest";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import { bindingOf, describeMalformedInput, describeRefusals, documentedRoutes, routesOf, type RouteCall } from "../support/access.js";
import { usePlatform } from "../support/platform.js";

const resource = { service: "media", kind: "video", id: "vid_1" };

/** One valid call per membership route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  createCheckout: { method: "POST", path: "/vip/api/v1/checkout", body: { plan_id: "pln_1", paid_via: "PAID_VIA_CREDIT", idempotency_key: "k1" } },
  getCreator: { method: "GET", path: "/vip/api/v1/creators/usr_c1" },
  listMembers: { method: "GET", path: "/vip/api/v1/creators/usr_c1/members" },
  checkEntitlement: { method: "GET", path: "/vip/api/v1/entitlements/check?subject=usr_a1&creator=usr_c1" },
  postEntitlementCheck: { method: "POST", path: "/vip/api/v1/entitlements/check", body: { subject: "usr_a1", creator: "usr_c1" } },
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
  setPolicy: { method: "POST", path: "/vip/api/v1/policies", body: { creator: "usr_c1", resource, rule: "POLICY_RULE_ANY_MEMBER" } },
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

  it("matches routes.tsv exactly (21 routes: method, path, capability, visibility)", async () => {
    expect(routes).toHaveLength(21);
    const documented = await documentedRoutes("vip");
    if (documented === undefined) return;
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
    expect((await t.http("GET", "/vip/api/v1/plans")).body).toEqual({ plans: { creator: "", plans: [], next_cursor: "" } });
  });

  it("refuses X-PF-Staff and X-PF-Subject from anonymous callers on public reads (403 auth.header_refused)", async () => {
    const answer = await t.http("GET", "/vip/api/v1/plans", { headers: { "x-pf-staff": "1" } });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.header_refused" });
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
