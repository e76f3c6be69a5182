import { describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { createGoal, creatorId } from "./overlay-support.js";

const t = usePlatform({ services: ["tips"] });
const path = "/tips/api/v1/overlay-configs";

const alerts = {
  kind: "OVERLAY_KIND_ALERTS",
  name: "Main alerts",
  alerts: {
    min_amount: { minor_units: "500", currency: "USD" },
    duration_ms: 5000,
    sound_url: "https://cdn.example/ding.mp3",
    sound_volume: 70,
    text_to_speech: true,
    template: "{supporter} tipped {amount}",
  },
};

async function creatorToken(creator = creatorId()) {
  return { creator, token: await t.token({ kind: "user", sub: creator }) };
}

describe("overlay configs", () => {
  it("are created for the acting creator at revision 1 (201, ETag), listed and read back; tips.overlay_config.changed is recorded", async () => {
    const { creator, token } = await creatorToken();
    const created = await t.http("POST", path, { token, body: alerts });
    expect(created.status).toBe(201);
    expect(created.headers.get("etag")).toBe('"1"');
    const config = created.body.config;
    expect(config).toMatchObject({
      creator,
      kind: "OVERLAY_KIND_ALERTS",
      name: "Main alerts",
      revision: "1",
      alerts: alerts.alerts,
    });
    expect(config.id).toMatch(/^ovc_/);
    const goalId = await createGoal(t, creator);
    const goals = await t.http("POST", path, {
      token,
      body: { kind: "OVERLAY_KIND_GOALS", name: "Goal bar", goals: { goal_id: goalId } },
    });
    expect(goals.body.config.goals).toEqual({ goal_id: goalId, style: "GOAL_STYLE_BAR", show_target: false });
    const list = await t.http("GET", path, { token });
    expect(list.body.configs.configs.map((c: { id: string }) => c.id)).toEqual([config.id, goals.body.config.id]);
    const read = await t.http("GET", `${path}/${config.id}`, { token });
    expect(read.body.config).toEqual(config);
    const events = await outboxEvents(t, "tips", config.id);
    expect(events.map((e) => e.subject)).toEqual(["tips.overlay_config.changed"]);
  });

  it("fill defaults: an alerts config with no settings shows every alert for 8 s", async () => {
    const { token } = await creatorToken();
    const created = await t.http("POST", path, { token, body: { kind: "OVERLAY_KIND_ALERTS", name: "Plain" } });
    expect(created.body.config.alerts).toMatchObject({ duration_ms: 8000, sound_url: "", text_to_speech: false });
  });

  it("are edited with PATCH: the sections sent replace the stored ones, the revision goes up, each edit is an event", async () => {
    const { token } = await creatorToken();
    const { config } = (await t.http("POST", path, { token, body: alerts })).body;
    const renamed = await t.http("PATCH", `${path}/${config.id}`, {
      token,
      body: { name: "Renamed", expected_revision: "1" },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.config).toMatchObject({ name: "Renamed", revision: "2", alerts: alerts.alerts });
    const quieter = await t.http("PATCH", `${path}/${config.id}`, {
      token,
      body: { alerts: { sound_volume: 10 } },
      headers: { "if-match": '"2"' },
    });
    expect(quieter.headers.get("etag")).toBe('"3"');
    expect(quieter.body.config).toMatchObject({
      name: "Renamed",
      revision: "3",
      alerts: { sound_volume: 10, duration_ms: 8000, text_to_speech: false },
    });
    expect((await outboxEvents(t, "tips", config.id)).length).toBe(3);
  });

  it("answer a stale revision 412 revision.conflict (expected_revision or If-Match) and change nothing", async () => {
    const { token } = await creatorToken();
    const { config } = (await t.http("POST", path, { token, body: alerts })).body;
    await t.http("PATCH", `${path}/${config.id}`, { token, body: { name: "Second" } });
    const stale = await t.http("PATCH", `${path}/${config.id}`, {
      token,
      body: { name: "Third", expected_revision: "1" },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: "revision.conflict", revision: "2" });
    const staleHeader = await t.http("PATCH", `${path}/${config.id}`, {
      token,
      body: { name: "Third" },
      headers: { "if-match": '"1"' },
    });
    expect(staleHeader.body.code).toBe("revision.conflict");
    // A current If-Match does not cover a stale body revision: the two must agree.
    const disagree = await t.http("PATCH", `${path}/${config.id}`, {
      token,
      body: { name: "Third", expected_revision: "1" },
      headers: { "if-match": '"2"' },
    });
    expect(disagree.body).toMatchObject({ status: 400, code: "request.invalid", field: "expected_revision" });
    expect((await t.http("GET", `${path}/${config.id}`, { token })).body.config).toMatchObject({
      name: "Second",
      revision: "2",
    });
  });

  it("of another creator answer 404 overlay_config.not_found to reads and edits, and are not listed", async () => {
    const owner = await creatorToken();
    const other = await creatorToken();
    const { config } = (await t.http("POST", path, { token: owner.token, body: alerts })).body;
    expect((await t.http("GET", `${path}/${config.id}`, { token: other.token })).body).toMatchObject({
      status: 404,
      code: "overlay_config.not_found",
    });
    expect(
      (await t.http("PATCH", `${path}/${config.id}`, { token: other.token, body: { name: "Mine" } })).body,
    ).toMatchObject({ status: 404, code: "overlay_config.not_found" });
    expect((await t.http("GET", path, { token: other.token })).body.configs.configs).toEqual([]);
    expect((await t.http("GET", `${path}/ovc_missing`, { token: owner.token })).status).toBe(404);
  });

  it("are read and edited by a first-party service acting for the creator (X-PF-Subject)", async () => {
    const { creator, token } = await creatorToken();
    const { config } = (await t.http("POST", path, { token, body: alerts })).body;
    const service = await t.token({
      kind: "service",
      svc: "web",
      caps: ["tips.overlay.config.get", "tips.overlay.config.update"],
    });
    const headers = { "x-pf-subject": creator };
    expect((await t.http("GET", `${path}/${config.id}`, { token: service, headers })).body.config.id).toBe(config.id);
    expect(
      (await t.http("PATCH", `${path}/${config.id}`, { token: service, headers, body: { name: "By service" } })).body
        .config.name,
    ).toBe("By service");
    const stranger = { "x-pf-subject": creatorId() };
    expect((await t.http("GET", `${path}/${config.id}`, { token: service, headers: stranger })).status).toBe(404);
  });

  it.each([
    [{ ...alerts, kind: "OVERLAY_KIND_UNSPECIFIED" }, "kind"],
    [{ ...alerts, name: " " }, "name"],
    [{ ...alerts, name: "x".repeat(81) }, "name"],
    [{ ...alerts, id: "ovc_mine" }, "id"],
    [{ ...alerts, expected_revision: "1" }, "expected_revision"],
    [{ ...alerts, alerts: { duration_ms: 500 } }, "alerts.duration_ms"],
    [{ ...alerts, alerts: { sound_url: "http://insecure.example/a.mp3" } }, "alerts.sound_url"],
    [{ ...alerts, alerts: { sound_volume: 101 } }, "alerts.sound_volume"],
    [{ ...alerts, alerts: { min_amount: { minor_units: "-1", currency: "USD" } } }, "alerts.min_amount"],
    [{ ...alerts, alerts: { template: "x".repeat(201) } }, "alerts.template"],
    [{ ...alerts, goals: { goal_id: "gol_1" } }, "goals"],
    [{ kind: "OVERLAY_KIND_GOALS", name: "G" }, "goals.goal_id"],
    [{ kind: "OVERLAY_KIND_GOALS", name: "G", goals: { goal_id: "nope" } }, "goals.goal_id"],
    [{ kind: "OVERLAY_KIND_GOALS", name: "G", goals: { goal_id: "gol_1" }, alerts: {} }, "alerts"],
  ])("refuse a bad create (400 request.invalid naming %#: %s)", async (body, field) => {
    const { token } = await creatorToken();
    const answer = await t.http("POST", path, { token, body });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "request.invalid", field });
  });

  it("show only the creator's own goal: another creator's, or none, is 404 goal.not_found on create and on PATCH", async () => {
    const { creator, token } = await creatorToken();
    const [mine, theirs] = [await createGoal(t, creator), await createGoal(t, creatorId())];
    for (const goal_id of [theirs, "gol_missing"]) {
      const created = await t.http("POST", path, {
        token,
        body: { kind: "OVERLAY_KIND_GOALS", name: "G", goals: { goal_id } },
      });
      expect(created.body).toMatchObject({ status: 404, code: "goal.not_found" });
    }
    const { config } = (
      await t.http("POST", path, { token, body: { kind: "OVERLAY_KIND_GOALS", name: "G", goals: { goal_id: mine } } })
    ).body;
    const moved = await t.http("PATCH", `${path}/${config.id}`, { token, body: { goals: { goal_id: theirs } } });
    expect(moved.body).toMatchObject({ status: 404, code: "goal.not_found" });
    expect((await t.http("GET", `${path}/${config.id}`, { token })).body.config).toMatchObject({
      revision: "1",
      goals: { goal_id: mine },
    });
  });

  it("refuse a PATCH that changes the kind, sends the other kind's section, or an empty name (400, nothing changed)", async () => {
    const { token } = await creatorToken();
    const { config } = (await t.http("POST", path, { token, body: alerts })).body;
    for (const [body, field] of [
      [{ kind: "OVERLAY_KIND_GOALS" }, "kind"],
      [{ goals: { goal_id: "gol_1" } }, "goals"],
      [{ name: "" }, "name"],
    ] as const) {
      const answer = await t.http("PATCH", `${path}/${config.id}`, { token, body });
      expect(answer.body, field).toMatchObject({ status: 400, field });
    }
    expect((await t.http("GET", `${path}/${config.id}`, { token })).body.config.revision).toBe("1");
  });
});
