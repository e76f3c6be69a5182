import { beforeAll, describe, expect, it } from "vitest";
import { aiRun } from "../support/ai-runs.js";
import { usePlatform } from "../support/platform.js";
import { ALL_COMMUNITY, WRITER, as, expectStatus, fresh, person, serviceToken } from "./support.js";

const t = usePlatform({
  services: ["community", "ai"],
  env: { PF_COMMUNITY_PULSE_ORIGINS: "https://pulse.example", PF_COMMUNITY_VOTES_PER_10_MINUTES: "500" },
});
/** The web service: every capability, moderation included. */
let web: ReturnType<typeof as>;
/** A service that only writes for people. */
let writer: ReturnType<typeof as>;
let blog: string;

beforeAll(async () => {
  const both = await serviceToken(t, ALL_COMMUNITY);
  const plain = await serviceToken(t, WRITER, "backend");
  blog = await serviceToken(t, ["community.pulse.write", "community.comment.write"], "blog");
  web = as(t, () => both);
  writer = as(t, () => plain);
});

/** A thread of a ref no owner gates (threads of gated content: comment-gates.test.ts), so its own rules alone apply. */
const newThread = async () => {
  const ref = { service: "reviews", kind: "entity", id: `ent-${fresh()}` };
  return expectStatus(await web("POST", "/api/v1/comments/threads/resolve", undefined, { ref }), 200).body.thread;
};
const comment = async (threadId: string, who: string, body = "hello") =>
  expectStatus(await web("POST", `/api/v1/comments/threads/${threadId}/comments`, who, { body }), 201).body.comment;

describe("comment threads", () => {
  it("exactly one thread per EntityRef, even under concurrent resolves", async () => {
    const ref = { service: "news", kind: "story", id: `story-${fresh()}` };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => web("POST", "/api/v1/comments/threads/resolve", undefined, { ref })),
    );
    const ids = new Set(answers.map((answer) => expectStatus(answer, 200).body.thread.id));
    expect(ids.size).toBe(1);
  });

  it("browsers resolve only the allow-listed types; services any", async () => {
    const browser = await t.token({ kind: "user", sub: person("b") });
    const resolve = (token: string, ref: object) =>
      t.http("POST", "/community/api/v1/comments/threads/resolve", { token, body: { ref } });
    expect((await resolve(browser, { service: "deals", kind: "offer", id: "off_1" })).status).toBe(200);
    const refused = await resolve(browser, { service: "billing", kind: "invoice", id: "inv_1" });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("community.thread_type_not_allowed");
    expect(
      (
        await web("POST", "/api/v1/comments/threads/resolve", undefined, {
          ref: { service: "billing", kind: "invoice", id: "inv_1" },
        })
      ).status,
    ).toBe(200);
  });

  it("a hidden thread is 404 except to moderators; a locked one takes no new comments or votes", async () => {
    const thread = await newThread();
    const first = await comment(thread.id, person("a"));
    const set = (visibility: string) =>
      web("PUT", `/api/v1/comments/threads/${thread.id}/visibility`, undefined, { visibility, reason: "heated" });
    const hidden = expectStatus(await set("hidden"), 200).body;
    expect(hidden.record).toMatchObject({ action: "visibility", value: "hidden", actor: "svc:web", relayed_by: "web" });
    const reader = person("r");
    const asReader = await writer("GET", `/api/v1/comments/threads/${thread.id}`, reader);
    expect(asReader.status).toBe(404);
    expect(asReader.body.code).toBe("thread.not_found");
    // The web service holds moderation: as itself, or vouching staff, it reads the hidden thread.
    expect((await web("GET", `/api/v1/comments/threads/${thread.id}`, undefined)).status).toBe(200);
    expect(
      (await web("GET", `/api/v1/comments/threads/${thread.id}`, person("s"), undefined, { "x-pf-staff": "1" })).status,
    ).toBe(200);
    expect((await web("GET", `/api/v1/comments/threads/${thread.id}`, person("s"))).status).toBe(404);

    expectStatus(await set("locked"), 200);
    expectStatus(await writer("GET", `/api/v1/comments/threads/${thread.id}`, reader), 200);
    const late = await writer("POST", `/api/v1/comments/threads/${thread.id}/comments`, reader, { body: "late" });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("thread.locked");
    const vote = await writer("POST", `/api/v1/comments/${first.id}/votes`, reader, { value: 1 });
    expect(vote.status).toBe(409);
    expect(vote.body.code).toBe("thread.locked");
  });

  it("a thread of another service's content answers 503 while that service does not answer, never open", async () => {
    // Blog does not run in this platform; the service acting as itself resolves the thread (no gate for it).
    const ref = { service: "blog", kind: "post", id: `pst_${fresh()}` };
    const thread = expectStatus(await web("POST", "/api/v1/comments/threads/resolve", undefined, { ref }), 200).body
      .thread;
    const read = await writer("GET", `/api/v1/comments/threads/${thread.id}`, person("r"));
    expect(read.body).toMatchObject({ status: 503, code: "blog.unavailable" });
    const resolve = await writer("POST", "/api/v1/comments/threads/resolve", person("r"), { ref });
    expect(resolve.body).toMatchObject({ status: 503, code: "blog.unavailable" });
  });

  it("one vote per person: 50 concurrent votes by one person count one; none on one's own comment", async () => {
    const thread = await newThread();
    const author = person("auth");
    const target = await comment(thread.id, author);
    const voter = person("v");
    const storm = await Promise.all(
      Array.from({ length: 50 }, () => writer("POST", `/api/v1/comments/${target.id}/votes`, voter, { value: 1 })),
    );
    expect(storm.map((answer) => answer.status)).toEqual(Array(50).fill(200));
    const read = expectStatus(await writer("GET", `/api/v1/comments/threads/${thread.id}`, voter), 200).body;
    expect(read.comments[0]).toMatchObject({ score: "1", my_vote: 1 });
    expectStatus(await writer("POST", `/api/v1/comments/${target.id}/votes`, voter, { value: -1 }), 200);
    expectStatus(await writer("POST", `/api/v1/comments/${target.id}/votes`, person("w"), { value: -1 }), 200);
    const after = expectStatus(await writer("GET", `/api/v1/comments/threads/${thread.id}`, voter), 200).body;
    expect(after.comments[0].score).toBe("-2");
    const own = await writer("POST", `/api/v1/comments/${target.id}/votes`, author, { value: 1 });
    expect(own.status).toBe(409);
    expect(own.body.code).toBe("vote.own_comment");
  });

  it("AI comments carry no person, even when a person is named beside origin ai", async () => {
    const thread = await newThread();
    const asker = person("asker");
    // A run the web service asked of the AI service (its stub provider) for the person: the route verifies it.
    const runner = await serviceToken(t, ["ai.run.create"]);
    const { runId } = await aiRun(t, { token: runner, workflow: "community.comment" });
    const answer = expectStatus(
      await web(
        "POST",
        `/api/v1/comments/threads/${thread.id}/comments`,
        asker,
        { body: "A summary", workflow: "community.comment", run_id: runId },
        { "x-pf-origin": "ai" },
      ),
      201,
    ).body.comment;
    expect(answer.authorship.ai).toMatchObject({ workflow: "community.comment", run_id: runId, stub_provider: true });
    expect(answer.authorship.person).toBeUndefined();
    expect(JSON.stringify(answer)).not.toContain(asker);
  });
});

describe("DELETE /api/v1/comments/{commentId}: moderator on anything, writer on their own only", () => {
  it("a writer deletes their own comment (a tombstone), never another's", async () => {
    const thread = await newThread();
    const author = person("a");
    const mine = await comment(thread.id, author);
    const refused = await writer("DELETE", `/api/v1/comments/${mine.id}`, person("other"));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("comment.not_author");
    const deleted = expectStatus(await writer("DELETE", `/api/v1/comments/${mine.id}`, author), 200).body;
    expect(deleted.comment).toMatchObject({ id: mine.id, body: "" });
    expect(deleted.comment.deleted_at).toBeDefined();
    expect(deleted.moderation).toBeUndefined();
  });

  it("a service holding both capabilities acting for a person it does not vouch gets the writer's rule", async () => {
    const thread = await newThread();
    const target = await comment(thread.id, person("a"));
    const unvouched = await web("DELETE", `/api/v1/comments/${target.id}`, person("notstaff"));
    expect(unvouched.status).toBe(403);
    expect(unvouched.body.code).toBe("comment.not_author");
    const staff = person("staff");
    const vouched = expectStatus(
      await web("DELETE", `/api/v1/comments/${target.id}?reason=abuse`, staff, undefined, { "x-pf-staff": "1" }),
      200,
    ).body;
    expect(vouched.moderation).toMatchObject({
      action: "delete_comment",
      actor: staff,
      relayed_by: "web",
      reason: "abuse",
    });
  });

  it("a service acting as itself is the moderator, audited as the service", async () => {
    const thread = await newThread();
    const target = await comment(thread.id, person("a"));
    const removed = expectStatus(await web("DELETE", `/api/v1/comments/${target.id}?reason=spam`, undefined), 200).body;
    expect(removed.moderation).toMatchObject({ actor: "svc:web", relayed_by: "web", status: "applied" });
    expect(removed.thread.comments).toBe("0");
  });
});

describe("pulse", () => {
  const publish = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http("POST", "/community/api/v1/pulse/items", { token: blog, body: { visibility: "public", ...body }, headers });
  const item = (id: string, occurredAt: string, extra: Record<string, unknown> = {}) => ({
    ref: { service: "blog", kind: "post", id },
    title: `Post ${id}`,
    url: `https://blog.example/${id}`,
    origin: "system",
    occurred_at: occurredAt,
    ...extra,
  });
  const readAll = async () => expectStatus(await t.http("GET", "/community/api/v1/pulse?limit=200"), 200).body.items;

  it("only the caller's own refs, only visibility public, no actor for ai or system", async () => {
    const foreign = await publish({
      ...item(`p-${fresh()}`, "2026-01-01T00:00:00Z"),
      ref: { service: "news", kind: "story", id: "s1" },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("pulse.foreign_ref");
    const hidden = await publish({ ...item(`p-${fresh()}`, "2026-01-01T00:00:00Z"), visibility: "members" });
    expect(hidden.status).toBe(422);
    expect(hidden.body.code).toBe("pulse.visibility_refused");
    const actor = await publish(item(`p-${fresh()}`, "2026-01-01T00:00:00Z"), { "x-pf-subject": person("a") });
    expect(actor.status).toBe(400);
    expect(actor.body.code).toBe("pulse.actor_refused");
    const ai = await publish(item(`p-${fresh()}`, "2026-01-01T00:00:00Z", { origin: "" }), {
      "x-pf-origin": "ai",
      "x-pf-subject": person("a"),
    });
    expect(ai.body.code).toBe("pulse.actor_refused");
  });

  it("provenance stands: a later write keeps the first origin, actor and time; retract and publish again", async () => {
    const id = `p-${fresh()}`;
    const author = person("author");
    const first = expectStatus(
      await publish(item(id, "2026-02-01T10:00:00Z", { origin: "user" }), { "x-pf-subject": author }),
      201,
    ).body.item;
    expect(first).toMatchObject({ origin: "user", actor: author, occurred_at: "2026-02-01T10:00:00Z" });
    const later = expectStatus(
      await publish(item(id, "2026-03-01T10:00:00Z", { origin: "system", title: "Renamed" })),
      200,
    ).body.item;
    expect(later).toMatchObject({
      origin: "user",
      actor: author,
      occurred_at: "2026-02-01T10:00:00Z",
      title: "Renamed",
    });
    const seen = (await readAll()).find((each: { ref: { id: string } }) => each.ref.id === id);
    expect(seen).toMatchObject({ title: "Renamed", origin: "user" });
    expect(seen.actor ?? "").toBe("");

    expectStatus(await t.http("DELETE", `/community/api/v1/pulse/items/blog/post/${id}`, { token: blog }), 200);
    expect((await readAll()).some((each: { ref: { id: string } }) => each.ref.id === id)).toBe(false);
    const back = expectStatus(await publish(item(id, "2026-04-01T00:00:00Z")), 200).body.item;
    expect(back).toMatchObject({ origin: "user", actor: author, occurred_at: "2026-02-01T10:00:00Z" });
    const otherService = await t.http("DELETE", `/community/api/v1/pulse/items/blog/post/${id}`, {
      token: await serviceToken(t, ["community.pulse.write"], "news"),
    });
    expect(otherService.body.code).toBe("pulse.foreign_ref");
  });

  it("newest first, and paging stays stable while newer items arrive", async () => {
    // Older than the other tests' items, newest first: ids[0] (June 5th) down to ids[4] (June 1st).
    const times = [5, 4, 3, 2, 1].map((day) => `2025-06-0${day}T00:00:00Z`);
    const ids = times.map(() => `page-${fresh()}`);
    for (const [i, id] of ids.entries()) expectStatus(await publish(item(id, times[i])), 201);
    const first = expectStatus(await t.http("GET", "/community/api/v1/pulse?limit=2"), 200).body;
    const newer = `new-${fresh()}`;
    expectStatus(await publish(item(newer, new Date().toISOString())), 201);
    const seen: string[] = first.items.map((each: { ref: { id: string } }) => each.ref.id);
    let cursor = first.next_cursor;
    while (cursor) {
      const next = expectStatus(await t.http("GET", `/community/api/v1/pulse?limit=2&cursor=${cursor}`), 200).body;
      seen.push(...next.items.map((each: { ref: { id: string } }) => each.ref.id));
      cursor = next.next_cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).not.toContain(newer);
    expect(seen.filter((id) => ids.includes(id))).toEqual(ids);
  });

  it("browsers read it only from the allow-listed origins (CORS)", async () => {
    const allowed = await fetch(`${t.gatewayUrl}/community/api/v1/pulse`, {
      headers: { origin: "https://pulse.example" },
    });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://pulse.example");
    const other = await fetch(`${t.gatewayUrl}/community/api/v1/pulse`, {
      headers: { origin: "https://evil.example" },
    });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await fetch(`${t.gatewayUrl}/community/api/v1/pulse`, {
      method: "OPTIONS",
      headers: { origin: "https://pulse.example", "access-control-request-method": "GET" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://pulse.example");
    // Other routes keep the platform's list (none configured here).
    const paste = await fetch(`${t.gatewayUrl}/community/api/pastes/x`, {
      headers: { origin: "https://pulse.example" },
    });
    expect(paste.headers.get("access-control-allow-origin")).toBeNull();
  });
});
