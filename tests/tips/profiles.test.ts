import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { as, fund, newKey, person, setProfile, usd, userToken } from "./support.js";

const t = usePlatform({ services: ["tips", "billing"] });

describe("tip profiles", () => {
  it("are created and updated by the creator's own token; fields replace whole; revisions checked", async () => {
    const creator = person("cre");
    const call = as(t, await userToken(t, creator));
    const created = await call("PATCH", `/profiles/${creator}`, {
      page_enabled: true,
      accepting: true,
      minimums: { tip: usd(100), paid_message: usd(300) },
      text_to_speech: { enabled: true, voice: "en-1", minimum: usd(500) },
      media_requests: { enabled: true, allowed_hosts: ["YouTube.com"], minimum: usd(200), max_seconds: 300 },
      word_filter: { words: ["Spoiler"] },
      moderators: { subjects: ["usr_mod1"] },
    });
    expect(created.status).toBe(200);
    expect(created.body.profile).toMatchObject({
      creator,
      page_enabled: true,
      accepting: true,
      minimums: { tip: { minor_units: "100" }, paid_message: { minor_units: "300" } },
      text_to_speech: { enabled: true, voice: "en-1" },
      media_requests: { enabled: true, allowed_hosts: ["youtube.com"], max_seconds: 300 },
      word_filter: { words: ["spoiler"] },
      moderators: { subjects: ["usr_mod1"] },
      revision: "1",
    });
    const updated = await call("PATCH", `/profiles/${creator}`, {
      accepting: false,
      word_filter: { words: [] },
      expected_revision: 1,
    });
    expect(updated.body.profile).toMatchObject({
      accepting: false,
      page_enabled: true,
      minimums: { tip: { minor_units: "100" } },
      revision: "2",
    });
    expect(updated.body.profile.word_filter?.words ?? []).toEqual([]);
    expect((await call("PATCH", `/profiles/${creator}`, { accepting: true, expected_revision: 1 })).body).toMatchObject(
      { status: 412, code: "revision.conflict" },
    );
    expect(
      (await call("PATCH", `/profiles/${creator}`, { accepting: true }, { "if-match": '"1"' })).body,
    ).toMatchObject({ status: 412, code: "revision.conflict" });
  });

  it("are updated by a service acting for the creator (X-PF-Subject); anyone else is refused (403 tips.not_creator)", async () => {
    const creator = person("cre");
    const web = await t.token({ kind: "service", svc: "web", caps: ["tips.profile.update"] });
    const relayed = await t.http("PATCH", `/tips/api/v1/profiles/${creator}`, {
      token: web,
      body: { accepting: true },
      headers: { "x-pf-subject": creator },
    });
    expect(relayed.status).toBe(200);
    const other = await t.http("PATCH", `/tips/api/v1/profiles/${creator}`, {
      token: web,
      body: { accepting: false },
      headers: { "x-pf-subject": person("oth") },
    });
    expect(other.body).toMatchObject({ status: 403, code: "tips.not_creator" });
    const someone = await as(t, await userToken(t, person("oth")))("PATCH", `/profiles/${creator}`, {
      accepting: false,
    });
    expect(someone.body).toMatchObject({ status: 403, code: "tips.not_creator" });
    const nobody = await t.http("PATCH", `/tips/api/v1/profiles/${creator}`, {
      token: web,
      body: { accepting: false },
    });
    expect(nobody.body).toMatchObject({ status: 403, code: "auth.person_required" });
  });

  it("refuse bad settings by field", async () => {
    const creator = person("cre");
    const call = as(t, await userToken(t, creator));
    expect((await call("PATCH", `/profiles/${creator}`, { minimums: { tip: usd(-1) } })).body).toMatchObject({
      status: 400,
      field: "minimums.tip.minor_units",
    });
    expect(
      (await call("PATCH", `/profiles/${creator}`, { media_requests: { allowed_hosts: ["not a host"] } })).body,
    ).toMatchObject({ status: 400, field: "media_requests.allowed_hosts" });
    expect((await call("PATCH", `/profiles/${creator}`, { media_requests: { max_seconds: -1 } })).body).toMatchObject({
      status: 400,
      field: "media_requests.max_seconds",
    });
    expect((await call("PATCH", `/profiles/${creator}`, { moderators: { subjects: ["bob"] } })).body).toMatchObject({
      status: 400,
      field: "moderators.subjects",
    });
    expect((await call("PATCH", `/profiles/${creator}`, { word_filter: { words: [" "] } })).body).toMatchObject({
      status: 400,
      field: "word_filter.words",
    });
    expect((await call("PATCH", `/profiles/${creator}`, { revision: 5 })).body).toMatchObject({
      status: 400,
      code: "request.invalid",
    });
  });

  it("with the page off: readable by its owner only (others 404); on: others read it without word filter and moderators", async () => {
    const creator = person("cre");
    await setProfile(t, creator, {
      page_enabled: false,
      word_filter: { words: ["x"] },
      moderators: { subjects: ["usr_mod1"] },
    });
    const owner = await as(t, await userToken(t, creator))("GET", `/profiles/${creator}`);
    expect(owner.body.profile).toMatchObject({ creator, page_enabled: false, word_filter: { words: ["x"] } });
    const other = as(t, await userToken(t, person("oth")));
    expect((await other("GET", `/profiles/${creator}`)).body).toMatchObject({ status: 404, code: "profile.not_found" });
    expect((await other("GET", `/profiles/${person("none")}`)).body).toMatchObject({
      status: 404,
      code: "profile.not_found",
    });
    await setProfile(t, creator, { page_enabled: true });
    const shown = await other("GET", `/profiles/${creator}`);
    expect(shown.body.profile).toMatchObject({ creator, page_enabled: true });
    expect(shown.body.profile.word_filter).toBeUndefined();
    expect(shown.body.profile.moderators).toBeUndefined();
  });
});

describe("the public tip page (designed)", () => {
  it("is read without a token: profile, open public goals with totals, recent visible paid messages; never private goals or hidden messages", async () => {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator, { word_filter: { words: ["hideme"] }, moderators: { subjects: ["usr_mod1"] } });
    await fund(t, supporter, 5000n);
    const creatorCall = as(t, await userToken(t, creator));
    const open = (await creatorCall("POST", "/goals", { title: "Open", target: usd(1000) })).body.goal;
    await creatorCall("POST", "/goals", { title: "Private", target: usd(1000), public: false });
    const closed = (await creatorCall("POST", "/goals", { title: "Closed", target: usd(1000) })).body.goal;
    await creatorCall("POST", `/goals/${closed.id}/close`, {});
    const supporterCall = as(t, await userToken(t, supporter));
    const shown = await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(300), message: "visible one", goal_id: open.id },
      { "idempotency-key": newKey() },
    );
    await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(300), message: "please hideme", goal_id: open.id },
      { "idempotency-key": newKey() },
    );

    const page = await t.http("GET", `/tips/api/v1/public/${creator}`);
    expect(page.status).toBe(200);
    expect(page.body.profile).toMatchObject({ creator, page_enabled: true, accepting: true });
    expect(page.body.profile.word_filter).toBeUndefined();
    expect(page.body.profile.moderators).toBeUndefined();
    expect(
      page.body.goals.map((g: { title: string; total: { minor_units: string } }) => [g.title, g.total.minor_units]),
    ).toEqual([["Open", "600"]]);
    expect(page.body.messages.map((m: { id: string }) => m.id)).toEqual([shown.body.interaction.id]);
    // Anyone reads the page: the payment's details stay with the supporter and the creator.
    expect(shown.body.interaction.transaction_id).toMatch(/^ltx_/);
    expect(page.body.messages[0]).toMatchObject({ message: "visible one", amount: { minor_units: "300" }, supporter });
    expect(page.body.messages[0].transaction_id ?? "").toBe("");
    expect(page.body.messages[0].intent_id ?? "").toBe("");
    expect(page.body.messages[0].payment_method ?? "PAYMENT_METHOD_UNSPECIFIED").toBe("PAYMENT_METHOD_UNSPECIFIED");

    await setProfile(t, creator, { page_enabled: false });
    expect((await t.http("GET", `/tips/api/v1/public/${creator}`)).body).toMatchObject({
      status: 404,
      code: "profile.not_found",
    });
  });
});
