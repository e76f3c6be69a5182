import { beforeAll, describe, expect, it } from "vitest";
import { aiRun } from "../support/ai-runs.js";
import { usePlatform } from "../support/platform.js";
import { as, createPaste, expectStatus, fresh, person, serviceToken } from "./support.js";

// Small limits so the tests reach them: 6 pastes per person, pastes of at most 2000 bytes, 40 anonymous reads.
const t = usePlatform({
  services: ["community", "ai"],
  env: {
    PF_COMMUNITY_PASTES_PER_10_MINUTES: "6",
    PF_COMMUNITY_PASTE_MAX_BYTES: "2000",
    PF_COMMUNITY_ANONYMOUS_READS_PER_MINUTE: "40",
  },
});
let web: string;
let call: ReturnType<typeof as>;

beforeAll(async () => {
  web = await serviceToken(t);
  call = as(t, () => web);
});

describe("pastes are created for the acting person, or as AI output with no person", () => {
  it("a service creates one for X-PF-Subject; a person with their own token for themselves", async () => {
    const owner = person("own");
    const paste = await createPaste(t, web, owner, { title: "My snippet", body: "const a = 1;", language: "TS" });
    expect(paste).toMatchObject({
      owner,
      state: "active",
      authorship: { person: owner },
      language: "ts",
      revision: "1",
    });
    expect(paste.slug).toBe("my-snippet");
    const self = person("self");
    const mine = await t.http("POST", "/community/api/pastes", {
      token: await t.token({ kind: "user", sub: self }),
      body: { title: "Mine", body: "x" },
    });
    expect(expectStatus(mine, 201).body.paste).toMatchObject({ owner: self, authorship: { person: self } });
  });

  it("AI output names its workflow and run, and is never attributed to a person (even one named beside it)", async () => {
    const ai = { "x-pf-origin": "ai" };
    const missing = await call("POST", "/api/pastes", undefined, { title: "Derived", body: "x" }, ai);
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe("paste.workflow_required");
    // The run is the web service's own, of the AI service's stub provider: the route verifies it.
    const runner = await serviceToken(t, ["ai.run.create"]);
    const { runId } = await aiRun(t, { token: runner, workflow: "community.derive_paste" });
    const derive = { title: "Derived", body: "x", workflow: "community.derive_paste" };
    const unknown = await call("POST", "/api/pastes", undefined, { ...derive, run_id: "air_0000000000" }, ai);
    expect(unknown.body).toMatchObject({ status: 422, code: "paste.workflow_required" });
    const derived = await call("POST", "/api/pastes", person("asker"), { ...derive, run_id: runId }, ai);
    const paste = expectStatus(derived, 201).body.paste;
    expect(paste.owner).toBe("");
    expect(paste.authorship).toMatchObject({
      ai: { workflow: "community.derive_paste", run_id: runId, stub_provider: true, service: "svc:web" },
    });
    expect(JSON.stringify(paste)).not.toContain("usr_asker");
  });

  it("only the stored owner edits or deletes; another person is refused whatever the caller says", async () => {
    const owner = person("own");
    const other = person("oth");
    const paste = await createPaste(t, web, owner, { title: `Owned ${fresh()}` });
    for (const [method, body] of [
      ["PUT", { body: "changed" }],
      ["DELETE", undefined],
    ] as const) {
      const refused = await call(method, `/api/pastes/${paste.slug}`, other, body);
      expect(refused.status, method).toBe(403);
      expect(refused.body.code).toBe("paste.not_owner");
    }
    const edited = expectStatus(
      await call("PUT", `/api/pastes/${paste.slug}`, owner, { body: "v2", expected_revision: 1 }),
      200,
    );
    expect(edited.body.paste).toMatchObject({ body: "v2", revision: "2" });
    const stale = await call("PUT", `/api/pastes/${paste.slug}`, owner, { body: "v3", expected_revision: 1 });
    expect(stale.status).toBe(412);
    expectStatus(await call("DELETE", `/api/pastes/${paste.slug}`, owner), 200);
    expect((await t.http("GET", `/community/api/pastes/${paste.slug}`)).status).toBe(404);
  });

  it("a new title moves the slug; the old one answers 301 to the new", async () => {
    const owner = person("own");
    const paste = await createPaste(t, web, owner, { title: `Before ${fresh()}` });
    const title = `After ${fresh()}`;
    const moved = expectStatus(await call("PUT", `/api/pastes/${paste.slug}`, owner, { title }), 200).body.paste;
    expect(moved.slug).not.toBe(paste.slug);
    const old = await fetch(`${t.gatewayUrl}/community/api/pastes/${paste.slug}`, { redirect: "manual" });
    expect(old.status).toBe(301);
    expect(new URL(old.headers.get("location")!, old.url).pathname).toBe(`/community/api/pastes/${moved.slug}`);
    expect(expectStatus(await t.http("GET", `/community/api/pastes/${moved.slug}`), 200).body.paste.title).toBe(title);
  });

  it("likes and copies count once per person; unlike withdraws; a fork is the forker's, pointing at its parent", async () => {
    const owner = person("own");
    const fan = person("fan");
    const paste = await createPaste(t, web, owner);
    for (let i = 0; i < 2; i++) {
      await call("POST", `/api/pastes/${paste.slug}/like`, fan, {});
      await call("POST", `/api/pastes/${paste.slug}/copy`, fan, {});
    }
    const read = expectStatus(await call("GET", `/api/pastes/${paste.slug}`, fan), 200).body.paste;
    expect(read).toMatchObject({ likes: "1", copies: "1", liked: true });
    expect(expectStatus(await call("DELETE", `/api/pastes/${paste.slug}/like`, fan), 200).body.paste).toMatchObject({
      likes: "0",
      liked: false,
    });
    const fork = expectStatus(
      await call("POST", `/api/pastes/${paste.slug}/fork`, fan, { title: `Fork ${fresh()}` }),
      201,
    ).body.paste;
    expect(fork).toMatchObject({ owner: fan, forked_from: paste.id, body: "hello", authorship: { person: fan } });
    expect(expectStatus(await t.http("GET", `/community/api/pastes/${paste.slug}`), 200).body.paste.forks).toBe("1");
  });

  it("a paste's comments are the comment thread of community/paste/<id>", async () => {
    const owner = person("own");
    const paste = await createPaste(t, web, owner);
    const written = expectStatus(
      await call("POST", `/api/pastes/${paste.slug}/comments`, person("c"), { body: "nice" }),
      201,
    );
    const thread = expectStatus(
      await call("POST", "/api/v1/comments/threads/resolve", undefined, {
        ref: { service: "community", kind: "paste", id: paste.id },
      }),
      200,
    ).body.thread;
    expect(written.body.comment.thread_id).toBe(thread.id);
    expect(thread.comments).toBe("1");
    const listed = expectStatus(await call("GET", `/api/pastes/${paste.slug}/comments`, owner), 200).body;
    expect(listed.comments.map((each: { body: string }) => each.body)).toEqual(["nice"]);
    expect(listed.paste.comments).toBe("1");
  });

  it("a person's own acts (comment, fork, like, edit) never come from AI output naming them (403 auth.person_required)", async () => {
    const owner = person("own");
    const paste = await createPaste(t, web, owner);
    const ai = { "x-pf-origin": "ai" };
    const acts: [string, string, unknown][] = [
      ["POST", `/api/pastes/${paste.slug}/comments`, { body: "as them" }],
      ["POST", `/api/pastes/${paste.slug}/fork`, {}],
      ["POST", `/api/pastes/${paste.slug}/like`, {}],
      ["PUT", `/api/pastes/${paste.slug}`, { body: "rewritten" }],
    ];
    for (const [method, path, body] of acts) {
      const answer = await call(method, path, owner, body, ai);
      expect(answer.body, path).toMatchObject({ status: 403, code: "auth.person_required" });
    }
    const read = expectStatus(await call("GET", `/api/pastes/${paste.slug}`, owner), 200).body.paste;
    expect(read).toMatchObject({ body: "hello", comments: "0", forks: "0", likes: "0" });
  });

  it("HTML and script in every text field come back inert", async () => {
    const paste = await createPaste(t, web, person("x"), {
      title: `<b>Bold</b><script>alert(1)</script> ${fresh()}`,
      body: "<script>alert(1)</script> <img src=x onerror=alert(1)> [a](javascript:alert(1)) **ok**",
    });
    expect(paste.title).not.toMatch(/[<>]/);
    expect(paste.title).toMatch(/^Bold /);
    // Markup arrives as text (escaped), never as an element, a handler or a javascript: link.
    expect(paste.body_html).not.toMatch(/<script|<img|href="javascript:/i);
    expect(paste.body_html).toContain("&lt;script&gt;");
    expect(paste.body_html).toContain("<strong>ok</strong>");
    const comment = expectStatus(
      await call("POST", `/api/pastes/${paste.slug}/comments`, person("c"), { body: "<iframe src=//x></iframe>hi" }),
      201,
    ).body.comment;
    expect(comment.body_html).not.toMatch(/<iframe/i);
  });

  it("the raw text is text/plain with an ETag, and If-None-Match answers 304", async () => {
    const paste = await createPaste(t, web, person("raw"), { body: "line 1\n<b>2</b>" });
    const raw = await fetch(`${t.gatewayUrl}/community/api/pastes/${paste.slug}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await raw.text()).toBe("line 1\n<b>2</b>");
    const again = await fetch(`${t.gatewayUrl}/community/api/pastes/${paste.slug}/raw`, {
      headers: { "if-none-match": raw.headers.get("etag")! },
    });
    expect(again.status).toBe(304);
  });

  it("an oversize paste is 413, and pastes per person are limited (429 with Retry-After)", async () => {
    const owner = person("lim");
    const big = await call("POST", "/api/pastes", owner, { title: "Big", body: "x".repeat(2001) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("paste.too_large");
    for (let i = 0; i < 6; i++) await createPaste(t, web, owner);
    const over = await call("POST", "/api/pastes", owner, { title: "One more", body: "x" });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});

describe("staff moderation of pastes (internal, audited with actor, relaying service and reason)", () => {
  it("censoring is sticky: text withheld from readers, the owner can no longer edit, staff still read it", async () => {
    const owner = person("own");
    const staff = person("staff");
    const paste = await createPaste(t, web, owner, { body: "bad words" });
    const censored = expectStatus(
      await call("POST", `/api/pastes/${paste.slug}/censor`, staff, { reason: "abuse" }, { "x-pf-staff": "1" }),
      200,
    ).body;
    expect(censored.paste).toMatchObject({ state: "censored", body: "bad words" });
    expect(censored.record).toMatchObject({
      action: "censor",
      actor: staff,
      relayed_by: "web",
      reason: "abuse",
      status: "applied",
    });
    const read = expectStatus(await t.http("GET", `/community/api/pastes/${paste.slug}`), 200).body.paste;
    expect(read).toMatchObject({ state: "censored", body: "", body_html: "" });
    const edit = await call("PUT", `/api/pastes/${paste.slug}`, owner, { body: "clean" });
    expect(edit.status).toBe(409);
    expect(edit.body.code).toBe("paste.censored");
    const log = expectStatus(await call("GET", "/api/v1/moderation/log?limit=200", undefined), 200).body.records;
    expect(log.find((each: { id: string }) => each.id === censored.record.id)).toMatchObject({
      target: { service: "community", kind: "paste", id: paste.id },
    });
  });

  it("bulk is bounded and each paste is its own change: an unknown slug is reported, the others are done", async () => {
    const owner = person("bulk");
    const a = await createPaste(t, web, owner);
    const b = await createPaste(t, web, owner);
    const answer = expectStatus(
      await call("POST", "/api/pastes/bulk", undefined, {
        action: "delete",
        slugs: [a.slug, "no-such-paste", b.slug],
        reason: "spam",
      }),
      200,
    ).body;
    expect(answer.items.map((item: { outcome: string }) => item.outcome)).toEqual(["applied", "refused", "applied"]);
    expect(answer.items[1].code).toBe("paste.not_found");
    expect(answer.items[0].record).toMatchObject({ actor: "svc:web", action: "delete_paste" });
    const tooMany = await call("POST", "/api/pastes/bulk", undefined, {
      action: "delete",
      slugs: Array.from({ length: 501 }, (_, i) => `s-${i}`),
      reason: "spam",
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.field).toBe("slugs");
  });

  it("staff delete any comment of a paste; moderation without X-PF-Staff for a person is refused", async () => {
    const paste = await createPaste(t, web, person("own"));
    const comment = expectStatus(
      await call("POST", `/api/pastes/${paste.slug}/comments`, person("c"), { body: "x" }),
      201,
    ).body.comment;
    const unvouched = await call("DELETE", `/api/pastes/${paste.slug}/comments/${comment.id}?reason=spam`, person("s"));
    expect(unvouched.status).toBe(403);
    expect(unvouched.body.code).toBe("auth.staff_required");
    const removed = expectStatus(
      await call("DELETE", `/api/pastes/${paste.slug}/comments/${comment.id}?reason=spam`, undefined),
      200,
    ).body;
    expect(removed.comment).toMatchObject({ body: "", id: comment.id });
    expect(removed.record).toMatchObject({ action: "delete_comment", actor: "svc:web", reason: "spam" });
  });
});

describe("anonymous reads", () => {
  it("are limited per client address (429 with Retry-After)", async () => {
    const paste = await createPaste(t, web, person("anon"));
    let answer;
    // 40 a minute, in windows aligned to the minute: 81 reads within a minute put 41 into one window, wherever the
    // window's edge falls among them (45 did not when it fell before the 41st).
    for (let i = 0; i < 81; i++) {
      answer = await t.http("GET", `/community/api/pastes/${paste.slug}`);
      if (answer.status === 429) break;
    }
    expect(answer!.status).toBe(429);
    expect(Number(answer!.headers.get("retry-after"))).toBeGreaterThan(0);
    // A token reads on.
    expect((await call("GET", `/api/pastes/${paste.slug}`, undefined)).status).toBe(200);
  });
});
