import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, expectStatus, person, serviceToken, userToken } from "./support.js";

const t = usePlatform({ services: ["vip"] });
let creator: string;
let mine: string;
let theirs: string;
let staff: string;

beforeAll(async () => {
  creator = person("cr");
  mine = await userToken(t, creator);
  theirs = await userToken(t, person("ot"));
  staff = await serviceToken(t);
});

const binding = { service: "media", kind: "emote_set", id: "es_1" };
const updatePerk = (id: string, token: string, body: unknown) =>
  t.http("PATCH", `/vip/api/v1/perks/${id}`, { token, body });
const listed = async (token?: string) =>
  (await t.http("GET", `/vip/api/v1/perks?owner=${creator}`, { token })).body.perks.map((p: { id: string }) => p.id);

describe("perks", () => {
  it("are created with their kind and product bindings, active", async () => {
    const perk = await createPerk(t, mine, { kind: "PERK_KIND_EMOTE", name: "Wave", product_bindings: [binding] });
    expect(perk).toMatchObject({
      owner: creator,
      kind: "PERK_KIND_EMOTE",
      name: "Wave",
      product_bindings: [binding],
      status: "PERK_STATUS_ACTIVE",
      revision: "1",
    });
    for (const kind of ["PERK_KIND_BADGE", "PERK_KIND_GATED_CONTENT", "PERK_KIND_ROOM", "PERK_KIND_ROLE"]) {
      expect((await createPerk(t, mine, { kind })).kind).toBe(kind);
    }
    expect((await t.http("POST", "/vip/api/v1/perks", { token: mine, body: { name: "x" } })).body).toMatchObject({
      status: 400,
      field: "kind",
    });
    expect(
      (
        await t.http("POST", "/vip/api/v1/perks", {
          token: mine,
          body: { kind: "PERK_KIND_BADGE", name: "x", product_bindings: [{ service: "media" }] },
        })
      ).body,
    ).toMatchObject({ status: 400, field: "product_bindings[0].kind" });
    expectStatus(
      await t.http("POST", "/vip/api/v1/perks", {
        token: mine,
        body: { kind: "PERK_KIND_BADGE", name: "n", owner: "network" },
      }),
      403,
      "vip.not_owner",
    );
    expect((await createPerk(t, staff, { owner: "network" })).owner).toBe("network");
  });

  it("are listed publicly while active; retiring hides them from the public, the owner and the grant still see them", async () => {
    const perk = await createPerk(t, mine);
    expect(await listed()).toContain(perk.id);
    const retired = expectStatus(await updatePerk(perk.id, mine, { retired: true }), 200).body.perk;
    expect(retired).toMatchObject({ status: "PERK_STATUS_RETIRED", revision: "2" });
    expect(retired.retired_at).toBeDefined();
    expect(await listed()).not.toContain(perk.id);
    expect(await listed(theirs)).not.toContain(perk.id);
    expect(await listed(mine)).toContain(perk.id);
    expect(await listed(staff)).toContain(perk.id);
    const onlyRetired = (
      await t.http("GET", `/vip/api/v1/perks?owner=${creator}&status=PERK_STATUS_RETIRED`, { token: staff })
    ).body.perks;
    expect(onlyRetired.every((p: { status: string }) => p.status === "PERK_STATUS_RETIRED")).toBe(true);
    expect(onlyRetired.map((p: { id: string }) => p.id)).toContain(perk.id);
    const back = expectStatus(await updatePerk(perk.id, mine, { retired: false }), 200).body.perk;
    expect(back.status).toBe("PERK_STATUS_ACTIVE");
  });

  it("are managed by their creator: another creator 403 perk.not_owner (404 for a retired one), stale revision 412", async () => {
    const perk = await createPerk(t, mine);
    expectStatus(await updatePerk(perk.id, theirs, { name: "mine" }), 403, "perk.not_owner");
    expectStatus(await updatePerk(perk.id, mine, { name: "Renamed", expected_revision: 1 }), 200);
    expectStatus(await updatePerk(perk.id, mine, { name: "Again", expected_revision: 1 }), 412, "revision.conflict");
    await updatePerk(perk.id, mine, { retired: true });
    expectStatus(await updatePerk(perk.id, theirs, { name: "mine" }), 404, "perk.not_found");
    expect((await updatePerk(perk.id, mine, {})).body).toMatchObject({ status: 400, code: "request.invalid" });
  });
});

describe("a published version's perk snapshot", () => {
  it("is kept after the perk is edited and retired; a draft shows the perk as it is now", async () => {
    const perk = await createPerk(t, mine, { name: "Original", description: "first", product_bindings: [binding] });
    const plan = await createPlan(t, mine, { perk_ids: [perk.id], publish: true });
    const snapshot = plan.current_version.perks;
    expect(snapshot).toEqual([
      {
        perk_id: perk.id,
        kind: "PERK_KIND_BADGE",
        name: "Original",
        description: "first",
        product_bindings: [binding],
      },
    ]);

    await updatePerk(perk.id, mine, { name: "Edited", description: "second", product_bindings: { refs: [] } });
    await updatePerk(perk.id, mine, { retired: true });
    const after = (await t.http("GET", `/vip/api/v1/plans/${plan.id}`)).body.plan.current_version.perks;
    expect(after).toEqual(snapshot);

    // A draft version's perks are live; publishing it takes a snapshot then, and a retired perk stops it.
    const other = await createPerk(t, mine, { name: "Live" });
    const draft = await createPlan(t, mine, { perk_ids: [other.id] });
    await updatePerk(other.id, mine, { name: "Live, edited" });
    expect(
      (await t.http("GET", `/vip/api/v1/plans/${draft.id}`, { token: mine })).body.plan.draft_version.perks[0].name,
    ).toBe("Live, edited");
    await updatePerk(other.id, mine, { retired: true });
    expectStatus(
      await t.http("POST", `/vip/api/v1/plans/${draft.id}/publish`, { token: mine, body: {} }),
      409,
      "perk.retired",
    );
  });
});
