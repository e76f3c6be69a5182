import { beforeAll, describe, expect, it } from "vitest";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, person, serviceToken, userToken } from "./support.js";

const t = usePlatform({ services: ["vip"] });
let creator: string;
let mine: string;
let staff: string;

beforeAll(async () => {
  creator = person("ru");
  mine = await userToken(t, creator);
  staff = await serviceToken(t);
});

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

describe("vip's input rules, declared in the contract", () => {
  it("report every rule a request breaks, each naming its field", async () => {
    const plan = await t.http("POST", "/vip/api/v1/plans", {
      token: mine,
      body: { name: " ", description: "d".repeat(2001), tier: "gold", perk_ids: ["prk_a", "prk_a"] },
    });
    expect(plan.body.field).toBe("name");
    expect(faultFields(plan)).toEqual(["name", "description", "tier", "perk_ids"]);

    const { id } = await createPlan(t, mine);
    const change = await t.http("PATCH", `/vip/api/v1/plans/${id}`, {
      token: mine,
      body: { name: "", tier: "tier_0", perks: { perk_ids: Array.from({ length: 51 }, (_, i) => `prk_${i}`) } },
    });
    expect(faultFields(change)).toEqual(["name", "tier", "perks.perk_ids"]);

    const perk = await t.http("POST", "/vip/api/v1/perks", {
      token: mine,
      body: { name: "n".repeat(101), product_bindings: Array.from({ length: 21 }, () => ({})) },
    });
    expect(faultFields(perk)).toEqual(["kind", "name", "product_bindings"]);

    const edit = await t.http("PATCH", `/vip/api/v1/perks/${(await createPerk(t, mine)).id}`, {
      token: mine,
      body: { name: "\t", description: "d".repeat(2001) },
    });
    expect(faultFields(edit)).toEqual(["name", "description"]);

    const checkout = await t.http("POST", "/vip/api/v1/checkout", {
      token: mine,
      body: { plan_version: -1, return_url: `https://example.com/${"r".repeat(2000)}` },
    });
    expect(faultFields(checkout)).toEqual(["plan_id", "plan_version", "paid_via", "return_url"]);

    const policy = await t.http("POST", "/vip/api/v1/policies", { token: staff, body: { creator } });
    expect(faultFields(policy)).toEqual(["resource", "rule"]);

    const list = await t.http("GET", "/vip/api/v1/plans?status=9&limit=0");
    expect(faultFields(list)).toEqual(["status", "limit"]);
  });
});
