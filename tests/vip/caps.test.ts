import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, expectStatus, person, userToken } from "./support.js";

/** Per-owner caps on plans not archived and on active perks, at small settings. */
const PLANS = 3;
const PERKS = 3;
const t = usePlatform({
  services: ["vip"],
  env: { PF_VIP_PLANS_PER_OWNER: String(PLANS), PF_VIP_PERKS_PER_OWNER: String(PERKS) },
});

const newPlan = (token: string, body: Record<string, unknown> = {}) =>
  t.http("POST", "/vip/api/v1/plans", { token, body: { name: "Gold", tier: "tier_1", ...body } });
const newPerk = (token: string) =>
  t.http("POST", "/vip/api/v1/perks", { token, body: { kind: "PERK_KIND_BADGE", name: "Badge" } });

describe("plans per owner", () => {
  it("are capped, drafts included: 409 plan.limit; archiving a published plan makes room", async () => {
    const token = await userToken(t, person("cr"));
    const published = await createPlan(t, token, { publish: true });
    for (let i = 1; i < PLANS; i++) await createPlan(t, token);
    const refused = expectStatus(await newPlan(token), 409, "plan.limit");
    expect(refused.body.limit).toBe(PLANS);
    expect(refused.body.detail).toContain("archive one");

    expectStatus(await t.http("POST", `/vip/api/v1/plans/${published.id}/archive`, { token }), 200);
    await createPlan(t, token);
    expectStatus(await newPlan(token), 409, "plan.limit");
    // Counted per owner.
    await createPlan(t, await userToken(t, person("cr")));
  });

  it("hold under concurrency: parallel creates with one place left make exactly one plan", async () => {
    const token = await userToken(t, person("cr"));
    for (let i = 1; i < PLANS; i++) await createPlan(t, token);
    const answers = await Promise.all(Array.from({ length: 6 }, () => newPlan(token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe("active perks per owner", () => {
  it("are capped: 409 perk.limit; retiring one makes room, and making it active again needs room", async () => {
    const token = await userToken(t, person("cr"));
    const perks = [];
    for (let i = 0; i < PERKS; i++) perks.push(await createPerk(t, token));
    const refused = expectStatus(await newPerk(token), 409, "perk.limit");
    expect(refused.body).toMatchObject({ limit: PERKS });
    expect(refused.body.detail).toContain("retire one");

    const patch = (id: string, body: unknown) => t.http("PATCH", `/vip/api/v1/perks/${id}`, { token, body });
    expectStatus(await patch(perks[0].id, { retired: true }), 200);
    await createPerk(t, token);
    expectStatus(await patch(perks[0].id, { retired: false }), 409, "perk.limit");
    expectStatus(await patch(perks[1].id, { retired: true }), 200);
    expect(expectStatus(await patch(perks[0].id, { retired: false }), 200).body.perk.status).toBe("PERK_STATUS_ACTIVE");
    // Edits of an active perk need no room.
    expectStatus(await patch(perks[0].id, { name: "Renamed" }), 200);
  });

  it("hold under concurrency: parallel creates with one place left make exactly one perk", async () => {
    const token = await userToken(t, person("cr"));
    for (let i = 1; i < PERKS; i++) await createPerk(t, token);
    const answers = await Promise.all(Array.from({ length: 6 }, () => newPerk(token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });
});
