import { beforeAll, describe, expect, it } from "vitest";
import { CouponsService } from "../../gen/pf/coupons/v1/coupons_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { backend, merchant, staff, submitted, unique } from "./support.js";
import { forged } from "../support/callers.js";

/** One valid call per coupons route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  getCoupon: { method: "GET", path: "/coupons/api/v1/coupons/cpn_1" },
  reportCoupon: {
    method: "POST",
    path: "/coupons/api/v1/coupons/cpn_1/report",
    body: { outcome: "REPORT_OUTCOME_WORKED" },
  },
  updateCouponStatus: {
    method: "POST",
    path: "/coupons/api/v1/coupons/cpn_1/status",
    body: { status: "COUPON_STATUS_DISABLED" },
  },
  submitCoupon: {
    method: "POST",
    path: "/coupons/api/v1/coupons/submit",
    body: { host: "access-check.example", code: "SAVE10" },
  },
  createMerchant: { method: "POST", path: "/coupons/api/v1/merchants", body: { host: "access-merchant.example" } },
  getMerchant: { method: "GET", path: "/coupons/api/v1/merchants/mer_1" },
  listMerchantCoupons: { method: "GET", path: "/coupons/api/v1/merchants/mer_1/coupons" },
  updateMerchantDomains: {
    method: "POST",
    path: "/coupons/api/v1/merchants/mer_1/domains",
    body: { domains: [{ domain: "a.example" }] },
  },
  updateMerchantStatus: {
    method: "POST",
    path: "/coupons/api/v1/merchants/mer_1/status",
    body: { status: "MERCHANT_STATUS_APPROVED" },
  },
  resolveMerchant: { method: "GET", path: "/coupons/api/v1/merchants/resolve?host=example.com" },
};

const routes = routesOf(CouponsService);
const t = usePlatform({ services: ["coupons"] });
const LOOKUPS = ["getCoupon", "getMerchant", "listMerchantCoupons"];

describe("every coupons route", () => {
  it("has a call here", () => {
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  it("has the spec's ten routes; only the three lookups let anonymous callers in", () => {
    expect(routes).toHaveLength(10);
    const anonymous = routes.filter((route) => route.rule.anonymous).map((route) => route.name);
    expect(anonymous.sort()).toEqual([...LOOKUPS].sort());
  });

  itWithSpec("matches routes.tsv exactly (method, path, capability, visibility)", "coupons", (documented) => {
    expect(documented).toHaveLength(10);
    const bound = routes.map((route) => ({ name: route.name, ...bindingOf(route) }));
    for (const [, verb, path, caps, visibility] of documented) {
      const template = path.replace(/\?.*$/, "");
      const found = bound.find((b) => b.verb === verb && b.template === template);
      expect(found, `${verb} ${path}`).toBeDefined();
      expect(found!.caps, `${verb} ${path}`).toBe(caps);
      expect(found!.visibility, `${verb} ${path}`).toBe(visibility);
    }
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

describe("submit is for a network user, or AI output from a service acting for nobody", () => {
  const caps = ["coupons.coupon.submit"];
  const service: TokenClaims = { kind: "service", svc: "web", caps };
  const ai = { "x-pf-origin": "ai" };
  const fpApp: TokenClaims = { kind: "app", app_id: "app1", caps, fp: true };
  const member = "auth.member_required";
  const cases: [string, TokenClaims | undefined, Record<string, string>, number, string][] = [
    ["no token", undefined, {}, 401, "auth.required"],
    ["a service without the capability", { ...service, caps: ["other"] }, {}, 403, "auth.capability_missing"],
    ["a third-party app", { kind: "app", app_id: "app1", caps }, {}, 403, "auth.first_party_only"],
    ["a first-party app acting for nobody", fpApp, {}, 403, member],
    ["an app sending X-PF-Origin", fpApp, ai, 403, "auth.header_refused"],
    ["a guest's own token", { kind: "user", sub: "gst_a1" }, {}, 403, member],
    ["a service acting for nobody", service, {}, 403, member],
    ["a service acting for a guest", service, { "x-pf-subject": "gst_b1" }, 403, member],
    ["a service sending AI output for a guest", service, { "x-pf-subject": "gst_b1", ...ai }, 403, member],
    ["a mod's service token acting for nobody", { ...service, mod: "mod_1" }, {}, 403, member],
    ["a user's own token", { kind: "user", sub: "usr_a1" }, {}, 201, "submitted"],
    ["a service acting for a user", service, { "x-pf-subject": "usr_b1" }, 201, "submitted"],
    ["a service sending AI output for a user", service, { "x-pf-subject": "usr_b1", ...ai }, 201, "submitted"],
    ["a service sending AI output for nobody", service, ai, 201, "submitted"],
  ];

  it.each(cases)("%s: %i %s", async (_who, claims, headers, status, code) => {
    const token = claims ? await t.token(claims) : undefined;
    const body = { host: `${unique("access")}.example`, code: unique("C") };
    const answer = await t.http("POST", "/coupons/api/v1/coupons/submit", { token, headers, body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    if (status !== 201) expect(answer.body.code).toBe(code);
  });
});

describe("the lookups are first-party with anonymous use, and the same for every caller let in", () => {
  let token: string;
  let couponId: string;
  let merchantId: string;
  beforeAll(async () => {
    token = await backend(t);
    const shop = await merchant(t, token);
    merchantId = shop.id;
    couponId = (await submitted(t, token, shop.id)).coupon.id;
  });

  const lookupPaths = () => [
    `/coupons/api/v1/coupons/${couponId}`,
    `/coupons/api/v1/merchants/${merchantId}`,
    `/coupons/api/v1/merchants/${merchantId}/coupons`,
  ];

  it("answers anonymous callers, people, first-party apps holding the capability and services alike", async () => {
    const callers = [
      undefined,
      await t.token({ kind: "user", sub: "usr_reader1" }),
      await t.token({ kind: "app", app_id: "app1", caps: ["coupons.coupon.lookup"], fp: true }),
      token,
    ];
    for (const path of lookupPaths()) {
      const answers = await Promise.all(callers.map((caller) => t.http("GET", path, { token: caller })));
      for (const answer of answers) expect(answer.status, path).toBe(200);
      for (const answer of answers) expect(answer.body).toEqual(answers[0].body);
    }
  });

  it("refuse third-party apps even with the capability (403 auth.first_party_only)", async () => {
    const thirdParty = await t.token({ kind: "app", app_id: "app2", caps: ["coupons.coupon.lookup"] });
    for (const path of lookupPaths()) {
      expect((await t.http("GET", path, { token: thirdParty })).body, path).toMatchObject({
        status: 403,
        code: "auth.first_party_only",
      });
    }
  });

  it("still need the capability from app and service tokens, and refuse a forged token", async () => {
    const app = await t.token({ kind: "app", app_id: "app1", caps: ["other.capability"], fp: true });
    expect((await t.http("GET", `/coupons/api/v1/coupons/${couponId}`, { token: app })).body).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
    });
    expect((await t.http("GET", `/coupons/api/v1/coupons/${couponId}`, { token: forged(token) })).status).toBe(401);
  });

  it("refuse X-PF-* headers from anonymous callers", async () => {
    const answer = await t.http("GET", `/coupons/api/v1/coupons/${couponId}`, {
      headers: { "x-pf-subject": "usr_a1" },
    });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.header_refused" });
  });

  it("merchant resolve is first-party: anonymous callers need a token", async () => {
    expect((await t.http("GET", "/coupons/api/v1/merchants/resolve?host=example.com")).body).toMatchObject({
      status: 401,
      code: "auth.required",
    });
  });
});

describe("moderation and merchant management are for staff", () => {
  it.each(["updateCouponStatus", "createMerchant", "updateMerchantStatus", "updateMerchantDomains"])(
    "%s refuses people on their own and services acting for a person not vouched as staff (403 auth.staff_required)",
    async (name) => {
      const call = calls[name];
      const user = await t.token({ kind: "user", sub: "usr_a1" });
      const own = await t.http(call.method, call.path, { token: user, body: call.body });
      expect(own.body).toMatchObject({ status: 403, code: "auth.staff_required" });
      const service = await backend(t);
      const headers = { "x-pf-subject": "usr_a1" };
      const answer = await t.http(call.method, call.path, { token: service, body: call.body, headers });
      expect(answer.body).toMatchObject({ status: 403, code: "auth.staff_required" });
      const asStaff = await t.http(call.method, call.path, { token: service, body: call.body, headers: staff });
      expect(String(asStaff.body?.code)).not.toMatch(/^auth\./);
    },
  );
});
