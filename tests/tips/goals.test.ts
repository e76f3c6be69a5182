import { describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { as, fund, newKey, person, setProfile, TIPS_ENV, usd, userToken } from "./support.js";

const t = usePlatform({ services: ["tips", "billing"], env: TIPS_ENV });

async function creatorScene() {
  const creator = person("cre");
  await setProfile(t, creator);
  return { creator, call: as(t, await userToken(t, creator)) };
}

describe("goals", () => {
  it("are created with title, target, description, image, order and visibility (201, revision 1, total 0) and published", async () => {
    const { creator, call } = await creatorScene();
    const answer = await call("POST", "/goals", {
      title: "New mic",
      target: usd(5000),
      description: "for the podcast",
      image_url: "https://img.example/mic.png",
      order: 2,
      public: false,
    });
    expect(answer.status).toBe(201);
    expect(answer.body.goal).toMatchObject({
      creator,
      title: "New mic",
      target: { minor_units: "5000", currency: "USD" },
      total: { minor_units: "0", currency: "USD" },
      description: "for the podcast",
      image_url: "https://img.example/mic.png",
      order: 2,
      public: false,
      closed: false,
      revision: "1",
    });
    expect(answer.body.goal.id).toMatch(/^gol_/);
    expect((await outboxEvents(t, "tips", answer.body.goal.id)).map((e) => e.subject)).toEqual(["tips.goal.changed"]);
  });

  it("refuses a missing title, a bad target or a non-https image (400 naming the field)", async () => {
    const { call } = await creatorScene();
    expect((await call("POST", "/goals", { title: " ", target: usd(100) })).body).toMatchObject({
      status: 400,
      field: "title",
    });
    expect((await call("POST", "/goals", { title: "x" })).body).toMatchObject({ status: 400, field: "target" });
    expect(
      (await call("POST", "/goals", { title: "x", target: usd(100), image_url: "http://img.example/a.png" })).body,
    ).toMatchObject({ status: 400, field: "image_url" });
    expect((await call("POST", "/goals", { title: "x", target: usd(100), total: usd(5) })).body).toMatchObject({
      status: 400,
      code: "request.invalid",
    });
  });

  it("private: read with contributions by its creator only; another person gets 404", async () => {
    const { creator, call } = await creatorScene();
    const goal = (await call("POST", "/goals", { title: "secret", target: usd(100), public: false })).body.goal;
    const external = await t.token({ kind: "service", svc: "kofi", caps: ["tips.interaction.record"] });
    await t.http("POST", "/tips/api/v1/interactions/external", {
      token: external,
      body: { creator, provider: "kofi", provider_ref: `g-${goal.id}`, amount: usd(60), goal_id: goal.id },
    });
    const read = await call("GET", `/goals/${goal.id}`);
    expect(read.status).toBe(200);
    expect(read.body.goal).toMatchObject({ public: false, total: { minor_units: "60" }, contributions: 1 });
    expect(read.body.contributions).toEqual([
      expect.objectContaining({ kind: "INTERACTION_KIND_EXTERNAL", amount: { minor_units: "60", currency: "USD" } }),
    ]);
    const other = as(t, await userToken(t, person("oth")));
    expect((await other("GET", `/goals/${goal.id}`)).body).toMatchObject({ status: 404, code: "goal.not_found" });
    expect((await other("PATCH", `/goals/${goal.id}`, { title: "mine" })).body).toMatchObject({
      status: 404,
      code: "goal.not_found",
    });
    expect((await other("POST", `/goals/${goal.id}/close`, {})).body).toMatchObject({
      status: 404,
      code: "goal.not_found",
    });
    expect((await call("GET", `/goals/${goal.id}?title=x`)).body).toMatchObject({ status: 400, field: "title" });
  });

  it("are edited with optimistic revisions: expected_revision or If-Match; stale answers 412 revision.conflict", async () => {
    const { call } = await creatorScene();
    const goal = (await call("POST", "/goals", { title: "Mic", target: usd(100) })).body.goal;
    const edited = await call("PATCH", `/goals/${goal.id}`, {
      title: "Better mic",
      target: usd(200),
      description: "d",
      image_url: "https://i.example/x.png",
      order: 5,
      expected_revision: 1,
    });
    expect(edited.status).toBe(200);
    expect(edited.body.goal).toMatchObject({
      title: "Better mic",
      target: { minor_units: "200" },
      description: "d",
      image_url: "https://i.example/x.png",
      order: 5,
      revision: "2",
    });
    const stale = await call("PATCH", `/goals/${goal.id}`, { title: "Stale", expected_revision: 1 });
    expect(stale.body).toMatchObject({ status: 412, code: "revision.conflict" });
    const staleHeader = await call("PATCH", `/goals/${goal.id}`, { title: "Stale" }, { "if-match": '"1"' });
    expect(staleHeader.body).toMatchObject({ status: 412, code: "revision.conflict" });
    const byHeader = await call("PATCH", `/goals/${goal.id}`, { title: "Header" }, { "if-match": '"2"' });
    expect(byHeader.body.goal).toMatchObject({ title: "Header", revision: "3" });
    expect(
      (await call("PATCH", `/goals/${goal.id}`, { target: { minor_units: 100, currency: "EUR" } })).body,
    ).toMatchObject({ status: 400, field: "target.currency" });
    expect((await call("PATCH", `/goals/${goal.id}`, { public: false })).body).toMatchObject({
      status: 400,
      code: "request.invalid",
    });
  });

  it("closed keeps its history and total; edits and closing again are refused (409 goal.closed)", async () => {
    const { creator, call } = await creatorScene();
    const supporter = person("sup");
    await fund(t, supporter, 1000n);
    const goal = (await call("POST", "/goals", { title: "Mic", target: usd(1000) })).body.goal;
    const tip = await as(t, await userToken(t, supporter))(
      "POST",
      "/checkout",
      { creator, amount: usd(300), goal_id: goal.id },
      { "idempotency-key": newKey() },
    );
    expect(tip.status).toBe(201);
    const closed = await call("POST", `/goals/${goal.id}/close`, {});
    expect(closed.status).toBe(200);
    expect(closed.body.goal).toMatchObject({ closed: true, total: { minor_units: "300" } });
    expect(closed.body.goal.closed_at).toBeTruthy();
    const read = await call("GET", `/goals/${goal.id}`);
    expect(read.body.goal).toMatchObject({ closed: true, total: { minor_units: "300" }, contributions: 1 });
    expect(read.body.contributions.map((c: { id: string }) => c.id)).toEqual([tip.body.interaction.id]);
    expect((await call("PATCH", `/goals/${goal.id}`, { title: "again" })).body).toMatchObject({
      status: 409,
      code: "goal.closed",
    });
    expect((await call("POST", `/goals/${goal.id}/close`, {})).body).toMatchObject({
      status: 409,
      code: "goal.closed",
    });
    const subjects = (await outboxEvents(t, "tips", goal.id)).filter((e) => e.subject === "tips.goal.changed");
    expect(subjects.length).toBe(3); // created, the tip's settlement, closed
  });
});
