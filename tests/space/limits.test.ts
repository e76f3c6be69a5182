import type { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { communityClient, expectStatus, makeSpace, person, spaceKey, startThread, writerService } from "./support.js";

/**
 * The forum with vip and network not answering (their addresses lead nowhere):
 * "unknown never authorizes". Low limits, so they show in a few calls.
 */
// A clock that stands still: the limits count in windows aligned to the minute, which a real clock may cross mid-test.
const t = usePlatform({
  services: ["space"],
  clock: new ManualClock(new Date("2026-11-28T12:00:10Z")),
  env: {
    PF_VIP_URL: "http://127.0.0.1:9",
    PF_NETWORK_URL: "http://127.0.0.1:9",
    PF_SPACE_CALL_TIMEOUT_MS: "500",
    PF_SPACE_ANONYMOUS_READS_PER_MIN: "3",
    PF_SPACE_POSTS_PER_10_MIN: "2",
  },
});
const user = (sub: string) => t.token({ kind: "user", sub });
const keys = { pub: spaceKey("pub"), staff: spaceKey("stf"), vip: spaceKey("vip"), reads: spaceKey("reads") };

beforeAll(async () => {
  await makeSpace(t, keys.pub);
  await makeSpace(t, keys.reads);
  await makeSpace(t, keys.staff, { visibility: SpaceVisibility.STAFF });
  await makeSpace(t, keys.vip, { membersOnly: true, vipCreator: "network" });
});

/** The problem code of a failed RPC. */
const codeOf = (error: unknown) => (error as ConnectError).findDetails(ProblemSchema)[0]?.code;

describe("with vip and network not answering, nothing is authorized by them", () => {
  it("a members-only space is 403 vip.members_only for every person (reads and writes), never a 5xx", async () => {
    const token = await user(person());
    const base = `/space/api/v1/spaces/${keys.vip}/threads`;
    expectStatus(await t.http("GET", base, { token }), 403, "vip.members_only");
    expectStatus(await t.http("POST", base, { token, body: { title: "t", body: "b" } }), 403, "vip.members_only");
    // Moderators pass the gate without asking vip (designed).
    expectStatus(await t.http("GET", base, { token: await writerService(t) }), 200);
  });

  it("a person's own token is no moderator while network's staff list cannot be read: staff spaces stay 404", async () => {
    expectStatus(await t.http("GET", `/space/api/v1/spaces/${keys.staff}`, { token: await user(person()) }), 404);
  });
});

describe("limits (429 rate.limited with Retry-After)", () => {
  it("anonymous reads per client address", async () => {
    const path = `/space/api/v1/spaces/${keys.reads}/threads`;
    for (let i = 0; i < 3; i++) expectStatus(await t.http("GET", path), 200);
    const refused = expectStatus(await t.http("GET", path), 429, "rate.limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Signed-in readers are not counted per address.
    expectStatus(await t.http("GET", path, { token: await user(person()) }), 200);
  });

  it("threads and replies per person; another person is not held back", async () => {
    const alice = person("alice");
    const { thread } = await startThread(t, keys.pub, alice, "One");
    const reply = await t.http("POST", `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}/posts`, {
      token: await user(alice),
      body: { body: "Two" },
    });
    expectStatus(reply, 201);
    const third = await t.http("POST", `/space/api/v1/spaces/${keys.pub}/threads`, {
      token: await user(alice),
      body: { title: "Three", body: "x" },
    });
    expect(Number(expectStatus(third, 429, "rate.limited").headers.get("retry-after"))).toBeGreaterThan(0);
    await startThread(t, keys.pub, person("bob"), "Bob's");
  });
});

describe("community's forwarded writes and moderation", () => {
  it("are idempotent under a required key: a retry answers the first thread, no second one", async () => {
    const internal = await communityClient(t);
    const headers = { "x-pf-subject": person("carol") };
    const request = { space: keys.pub, title: "Once", body: "only once", idempotencyKey: `once-${Date.now()}` };
    const first = await internal.createThread(request, { headers });
    const again = await internal.createThread(request, { headers });
    expect(again.thread?.id).toBe(first.thread?.id);
    const listing = expectStatus(
      await t.http("GET", `/space/api/v1/spaces/${keys.pub}/threads?limit=200`, { token: await writerService(t) }),
      200,
    );
    expect(listing.body.threads.filter((each: { title: string }) => each.title === "Once")).toHaveLength(1);
    const missing = await internal.createThread({ ...request, idempotencyKey: "" }, { headers }).catch(codeOf);
    expect(missing).toBe("request.invalid");
  });

  it("a moderator edits or deletes any post, audited with actor, relaying service and reason; a writer only their own", async () => {
    const internal = await communityClient(t);
    const author = person("dave");
    const { thread } = await startThread(t, keys.pub, author, "Moderated");
    const reply = await internal.replyToThread(
      { threadId: thread.id, body: "rude words", idempotencyKey: `r-${thread.id}` },
      { headers: { "x-pf-subject": author } },
    );
    const postId = reply.post!.id;
    const other = { headers: { "x-pf-subject": person("eve") } };
    expect(await internal.deletePost({ postId, idempotencyKey: `e-${postId}` }, other).catch(codeOf)).toBe(
      "post.not_author",
    );
    const asWriter = { postId, idempotencyKey: `w-${postId}`, reason: "because" };
    expect(await internal.deletePost(asWriter, { headers: { "x-pf-subject": author } }).catch(codeOf)).toBe(
      "request.invalid",
    );

    const staff = { headers: { "x-pf-subject": person("mod"), "x-pf-staff": "1" } };
    const edited = await internal.editPost(
      { postId, body: "[removed]", idempotencyKey: `m-${postId}`, reason: "insults", relayedBy: "blog" },
      staff,
    );
    expect(edited.post?.body).toBe("[removed]");
    expect(edited.audit).toMatchObject({ action: "edit_post", postId, relayedBy: "blog", reason: "insults" });
    expect(edited.audit?.actor).toBe(staff.headers["x-pf-subject"]);
    const deleted = await internal.deletePost({ postId, idempotencyKey: `d-${postId}`, reason: "spam" }, {});
    expect(deleted.post?.deleted).toBe(true);
    expect(deleted.audit).toMatchObject({
      action: "delete_post",
      actor: "svc:community",
      relayedBy: "",
      reason: "spam",
    });
    expect(deleted.thread?.replyCount).toBe(0);
  });
});
