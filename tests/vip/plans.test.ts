import { beforeAll, describe, expect, it } from "vitest";
import { encodeCursor } from "../../services/kit/handler/paging.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { createPerk, createPlan, expectStatus, person, serviceToken, userToken } from "./support.js";

const t = usePlatform({ services: ["vip"] });
let creator: string;
let other: string;
let mine: string;
let theirs: string;
let staff: string;

beforeAll(async () => {
  [creator, other] = [person("cr"), person("ot")];
  mine = await userToken(t, creator);
  theirs = await userToken(t, other);
  staff = await serviceToken(t);
});

const patch = (id: string, token: string, body: unknown, headers?: Record<string, string>) =>
  t.http("PATCH", `/vip/api/v1/plans/${id}`, { token, body, headers });
const read = (id: string, token?: string) => t.http("GET", `/vip/api/v1/plans/${id}`, { token });
const versions = (id: string, token?: string) => t.http("GET", `/vip/api/v1/plans/${id}/versions`, { token });

describe("a draft plan", () => {
  it("is created as a draft with its first version, shown to its owner and the grant only", async () => {
    const plan = await createPlan(t, mine, { description: "All the perks" });
    expect(plan).toMatchObject({ owner: creator, status: "PLAN_STATUS_DRAFT", revision: "1" });
    expect(plan.draft_version).toMatchObject({
      version: "1",
      state: "VERSION_STATE_DRAFT",
      name: "Gold",
      tier: "tier_1",
      created_by: creator,
    });
    expect(plan.current_version).toBeUndefined();
    expectStatus(await read(plan.id), 404, "plan.not_found");
    expectStatus(await read(plan.id, theirs), 404, "plan.not_found");
    expect((await read(plan.id, mine)).body.plan.id).toBe(plan.id);
    expect((await read(plan.id, staff)).body.plan.draft_version.version).toBe("1");
    const listed = async (token?: string) =>
      (await t.http("GET", `/vip/api/v1/plans?owner=${creator}`, { token })).body.plans.plans.map(
        (p: { id: string }) => p.id,
      );
    expect(await listed()).not.toContain(plan.id);
    expect(await listed(theirs)).not.toContain(plan.id);
    expect(await listed(mine)).toContain(plan.id);
    expect(await listed(staff)).toContain(plan.id);
    // The grant is staff's: a first-party app acting for nobody has it, a third-party app never (it sees what the public sees).
    const firstParty = await t.token({ kind: "app", app_id: "app_console", fp: true, caps: ["vip.plan.list"] });
    const thirdParty = await t.token({ kind: "app", app_id: "app_other", caps: ["vip.plan.list"] });
    expect((await read(plan.id, firstParty)).body.plan.draft_version.version).toBe("1");
    expectStatus(await read(plan.id, thirdParty), 404, "plan.not_found");
    expect(await listed(thirdParty)).not.toContain(plan.id);
  });

  it("takes a new draft version on PATCH (the earlier draft stays, discarded), then publishes it", async () => {
    const plan = await createPlan(t, mine);
    const changed = expectStatus(await patch(plan.id, mine, { name: "Gold+", tier: "tier_2" }), 200).body.plan;
    expect(changed).toMatchObject({ status: "PLAN_STATUS_DRAFT", revision: "2" });
    expect(changed.draft_version).toMatchObject({ version: "2", name: "Gold+", tier: "tier_2" });
    expect(changed.versions.map((v: { version: string; state: string }) => [v.version, v.state])).toEqual([
      ["2", "VERSION_STATE_DRAFT"],
      ["1", "VERSION_STATE_DISCARDED"],
    ]);
    const published = expectStatus(
      await t.http("POST", `/vip/api/v1/plans/${plan.id}/publish`, { token: mine, body: {} }),
      200,
    ).body.plan;
    expect(published).toMatchObject({ status: "PLAN_STATUS_PUBLISHED", revision: "3" });
    expect(published.current_version).toMatchObject({ version: "2", state: "VERSION_STATE_CURRENT", name: "Gold+" });
    expect(published.current_version.published_at).toBeDefined();
    expect(published.draft_version).toBeUndefined();
    // Public readers now see it, without the discarded draft.
    const publicly = (await read(plan.id)).body.plan;
    expect(publicly.versions.map((v: { version: string }) => v.version)).toEqual(["2"]);
    expect((await versions(plan.id)).body.versions.versions.map((v: { version: string }) => v.version)).toEqual(["2"]);
    expect((await versions(plan.id, mine)).body.versions.versions.map((v: { version: string }) => v.version)).toEqual([
      "2",
      "1",
    ]);
  });

  it("publishes at once with PATCH publish, and with publish on create", async () => {
    const plan = await createPlan(t, mine);
    const published = expectStatus(await patch(plan.id, mine, { description: "now", publish: true }), 200).body.plan;
    expect(published.current_version).toMatchObject({ version: "2", description: "now" });
    const atOnce = await createPlan(t, mine, { publish: true });
    expect(atOnce).toMatchObject({
      status: "PLAN_STATUS_PUBLISHED",
      current_version: { version: "1", state: "VERSION_STATE_CURRENT" },
    });
  });
});

describe("a published plan", () => {
  it("publishes each PATCH as a new version at once; the earlier version is unchanged", async () => {
    const plan = await createPlan(t, mine, { publish: true, description: "first terms" });
    const before = (await read(plan.id)).body.plan.current_version;
    const changed = expectStatus(await patch(plan.id, mine, { tier: "tier_3" }), 200).body.plan;
    expect(changed.current_version).toMatchObject({
      version: "2",
      state: "VERSION_STATE_CURRENT",
      tier: "tier_3",
      description: "first terms",
    });
    expect(changed.draft_version).toBeUndefined();
    const history = (await versions(plan.id)).body.versions.versions;
    expect(history[1]).toEqual({ ...before, state: "VERSION_STATE_SUPERSEDED" });
  });

  it("refuses a stale revision (412 revision.conflict), by expected_revision or If-Match", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    expectStatus(await patch(plan.id, mine, { name: "A", expected_revision: 1 }), 200);
    const stale = expectStatus(
      await patch(plan.id, mine, { name: "B", expected_revision: 1 }),
      412,
      "revision.conflict",
    );
    expect(stale.body.revision).toBe("2");
    expectStatus(await patch(plan.id, mine, { name: "B" }, { "if-match": '"1"' }), 412, "revision.conflict");
    const fresh = expectStatus(await patch(plan.id, mine, { name: "B" }, { "if-match": '"2"' }), 200);
    expect(fresh.headers.get("etag")).toBe('"3"');
    expect((await read(plan.id)).headers.get("etag")).toBe('"3"');
  });

  it("is managed by its creator only: another creator 403 plan.not_owner, a draft of another 404", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    expectStatus(await patch(plan.id, theirs, { name: "Mine now" }), 403, "plan.not_owner");
    expectStatus(
      await t.http("POST", `/vip/api/v1/plans/${plan.id}/archive`, { token: theirs, body: {} }),
      403,
      "plan.not_owner",
    );
    const draft = await createPlan(t, mine);
    expectStatus(await patch(draft.id, theirs, { name: "Mine now" }), 404, "plan.not_found");
    expectStatus(await patch("pln_missing", mine, { name: "x" }), 404, "plan.not_found");
  });

  it("is archived: hidden from the public, shown to the grant, changed no more", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const archived = expectStatus(
      await t.http("POST", `/vip/api/v1/plans/${plan.id}/archive`, { token: mine, body: {} }),
      200,
    ).body.plan;
    expect(archived).toMatchObject({ status: "PLAN_STATUS_ARCHIVED", current_version: { version: "1" } });
    expect(archived.archived_at).toBeDefined();
    expectStatus(await read(plan.id), 404, "plan.not_found");
    expect((await read(plan.id, staff)).body.plan.status).toBe("PLAN_STATUS_ARCHIVED");
    const page = (await t.http("GET", `/vip/api/v1/creators/${creator}`)).body.plans;
    expect(page.creator).toBe(creator);
    expect(page.plans.map((p: { id: string }) => p.id)).not.toContain(plan.id);
    expect(
      (await t.http("GET", `/vip/api/v1/creators/${creator}`, { token: staff })).body.plans.plans.map(
        (p: { id: string }) => p.id,
      ),
    ).toContain(plan.id);
    expectStatus(await patch(plan.id, mine, { name: "again" }), 409, "plan.archived");
    expectStatus(
      await t.http("POST", `/vip/api/v1/plans/${plan.id}/publish`, { token: mine, body: {} }),
      409,
      "plan.archived",
    );
    const draft = await createPlan(t, mine);
    expectStatus(
      await t.http("POST", `/vip/api/v1/plans/${draft.id}/archive`, { token: mine, body: {} }),
      409,
      "plan.not_published",
    );
  });
});

describe("concurrent writes of one plan", () => {
  it("turn parallel PATCHes into consecutive versions, never a lost or repeated number", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const answers = await Promise.all(["A", "B", "C", "D", "E"].map((name) => patch(plan.id, mine, { name })));
    for (const answer of answers) expectStatus(answer, 200);
    const history = (await versions(plan.id)).body.versions.versions as { version: string; name: string }[];
    expect(history.map((v) => Number(v.version))).toEqual([6, 5, 4, 3, 2, 1]);
    // Each answer is the version its PATCH wrote.
    expect(new Set(answers.map((a) => a.body.plan.current_version.version)).size).toBe(5);
  });

  it("let one PATCH of a revision through and answer the others 412", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const answers = await Promise.all(
      ["A", "B", "C"].map((name) => patch(plan.id, mine, { name, expected_revision: 1 })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412]);
    expect((await versions(plan.id)).body.versions.versions).toHaveLength(2);
  });

  it("serialize a publish racing an archive: archived at the end, the publish either first or refused 409", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    expectStatus(await patch(plan.id, mine, { name: "next" }), 200);
    const [published, archived] = await Promise.all([
      t.http("POST", `/vip/api/v1/plans/${plan.id}/publish`, { token: mine, body: { name: "raced" } }),
      t.http("POST", `/vip/api/v1/plans/${plan.id}/archive`, { token: mine, body: {} }),
    ]);
    expectStatus(archived, 200);
    expect([200, 409]).toContain(published.status);
    if (published.status === 409) expect(published.body.code).toBe("plan.archived");
    const after = (await read(plan.id, mine)).body.plan;
    expect(after.status).toBe("PLAN_STATUS_ARCHIVED");
    expect(after.versions).toHaveLength(published.status === 200 ? 3 : 2);
  });
});

describe("plan input", () => {
  it("refuses a price (billing prices the tier), bad tiers and names, and empty changes", async () => {
    const price = { minor_units: "100", currency: "USD" };
    expect((await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "x", price } })).body).toMatchObject(
      { status: 400, code: "vip.price_refused", field: "price" },
    );
    const plan = await createPlan(t, mine);
    expect((await patch(plan.id, mine, { price })).body).toMatchObject({ status: 400, code: "vip.price_refused" });
    expect(
      (await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "x", tier: "gold" } })).body,
    ).toMatchObject({ status: 400, field: "tier" });
    expect((await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "" } })).body).toMatchObject({
      status: 400,
      field: "name",
    });
    expect((await patch(plan.id, mine, {})).body).toMatchObject({
      status: 400,
      code: "request.invalid",
      field: "publish",
    });
    expect(
      (await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "x", owner: other } })).body,
    ).toMatchObject({ status: 403, code: "vip.not_owner" });
    expect((await t.http("GET", "/vip/api/v1/plans?owner=bob")).body).toMatchObject({ status: 400, field: "owner" });
    expect((await t.http("GET", "/vip/api/v1/creators/bob")).body).toMatchObject({ status: 400, field: "ref" });
    // The create request holds the perks at perk_ids (a PATCH at perks.perk_ids): the refusal names where they were sent.
    expect(
      (await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "x", perk_ids: ["bad"] } })).body,
    ).toMatchObject({ status: 400, field: "perk_ids[0]" });
    expect((await patch(plan.id, mine, { perks: { perk_ids: ["bad"] } })).body).toMatchObject({
      status: 400,
      field: "perks.perk_ids[0]",
    });
  });

  it("refuses another creator's perk or an unknown one (422), and a retired one (409 perk.retired)", async () => {
    const foreign = await createPerk(t, theirs);
    expect(
      (await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "x", perk_ids: [foreign.id] } })).body,
    ).toMatchObject({ status: 422, field: "perk_ids" });
    const retired = await createPerk(t, mine);
    await t.http("PATCH", `/vip/api/v1/perks/${retired.id}`, { token: mine, body: { retired: true } });
    expect(
      (await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "x", perk_ids: [retired.id] } })).body,
    ).toMatchObject({ status: 409, code: "perk.retired" });
  });
});

describe("network plans", () => {
  it("need staff: a creator is refused, a service acting for nobody or for a stated staff member may", async () => {
    expectStatus(
      await t.http("POST", "/vip/api/v1/plans", { token: mine, body: { name: "Net", owner: "network" } }),
      403,
      "vip.not_owner",
    );
    const plan = await createPlan(t, staff, { owner: "network", publish: true });
    expect(plan.owner).toBe("network");
    const acting = await createPlan(t, staff, { owner: "network" });
    expectStatus(await patch(acting.id, staff, { name: "Net 2" }, { "x-pf-subject": creator }), 404, "plan.not_found");
    expectStatus(await patch(acting.id, staff, { name: "Net 2" }, { "x-pf-subject": creator, "x-pf-staff": "1" }), 200);
    expectStatus(await patch(plan.id, mine, { name: "mine" }), 403, "plan.not_owner");
  });
});

describe("plan versions in the database", () => {
  it("are insert-only: an update or delete of a version or publication is refused", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    const connection = t.platform.contexts.get("vip")!.orm.em.getConnection();
    await expect(
      connection.execute(`update vip.plan_versions set name = 'x' where plan_id = ?`, [plan.id]),
    ).rejects.toThrow(/immutable/);
    await expect(connection.execute(`delete from vip.plan_versions where plan_id = ?`, [plan.id])).rejects.toThrow(
      /immutable/,
    );
    await expect(
      connection.execute(`update vip.plan_publications set perks = '[]' where plan_id = ?`, [plan.id]),
    ).rejects.toThrow(/immutable/);
  });
});

describe("events", () => {
  it("announce each published version and each archive through the outbox", async () => {
    const plan = await createPlan(t, mine, { publish: true });
    await patch(plan.id, mine, { name: "Gold 2" });
    await t.http("POST", `/vip/api/v1/plans/${plan.id}/archive`, { token: mine, body: {} });
    const events = await outboxEvents(t, "vip", plan.id);
    expect(events.map((e) => e.subject)).toEqual(["vip.plan.published", "vip.plan.published", "vip.plan.archived"]);
    const last = JSON.parse(events[2].payload);
    expect(last.plan).toMatchObject({ id: plan.id, status: "PLAN_STATUS_ARCHIVED", current_version: { version: "2" } });
    expect(last.plan.draft_version).toBeUndefined();
    // Drafts announce nothing.
    const draft = await createPlan(t, mine);
    expect(await outboxEvents(t, "vip", draft.id)).toEqual([]);
  });
});

describe("list cursors", () => {
  it("a forged cursor is 400 naming cursor on every vip list, never a 500 or the first page", async () => {
    const forged = encodeCursor([1]);
    for (const path of ["/plans", "/perks", `/creators/${person()}`, "/policies"]) {
      const answer = await t.http("GET", `/vip/api/v1${path}?cursor=${forged}`, {
        token: await userToken(t, person()),
      });
      expect(answer.body, path).toMatchObject({ status: 400, code: "request.invalid", field: "cursor" });
    }
  });
});
