import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { EntitlementChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { SubscriptionSchema, SubscriptionStatus } from "../../gen/pf/billing/v1/subscriptions_pb.js";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { applyEntitlementEvent } from "../vip/support.js";
import { communityClient, expectStatus, makeSpace, person, spaceKey, startThread, writerService } from "./support.js";

const t = usePlatform({ services: ["space", "vip", "network"] });

const user = (sub: string) => t.token({ kind: "user", sub });
const creator = person("creator");
const member = person("member");
const stranger = person("stranger");
const staffer = person("staff");
const keys = { pub: spaceKey("pub"), members: spaceKey("mem"), staff: spaceKey("stf"), vip: spaceKey("vip") };

beforeAll(async () => {
  await makeSpace(t, keys.pub);
  await makeSpace(t, keys.members, { visibility: SpaceVisibility.MEMBERS });
  await makeSpace(t, keys.staff, { visibility: SpaceVisibility.STAFF });
  await makeSpace(t, keys.vip, { membersOnly: true, vipCreator: creator });
  // The member holds a membership of the creator, as billing's event tells vip.
  const event = create(EntitlementChangedSchema, {
    subscription: create(SubscriptionSchema, {
      id: "sub_1",
      subject: member,
      streamer: creator,
      planId: "pln_1",
      planVersion: 1n,
      status: SubscriptionStatus.ACTIVE,
      validUntil: timestampFromDate(new Date(Date.now() + 30 * 86_400_000)),
    }),
    change: "started",
    occurredAt: timestampFromDate(new Date()),
  });
  await applyEntitlementEvent(t, event, `ev-${member}`);
  const admin = t.client(
    NetworkAdminService,
    await t.token({ kind: "service", svc: "network", caps: ["network.admin"] }),
  );
  await admin.setStaff({ subject: staffer, role: StaffRole.GLOBAL_MODERATOR });
});

const listed = async (token?: string, headers?: Record<string, string>) =>
  (
    expectStatus(await t.http("GET", "/space/api/v1/spaces", { token, headers }), 200).body.spaces as {
      key: string;
      members_only?: boolean;
    }[]
  )
    .map((space) => space.key)
    .filter((key) => Object.values(keys).includes(key))
    .sort();

describe("visibility: public, members, staff, and members-only (VIP) spaces", () => {
  it("anonymous callers and guests list public spaces, VIP ones flagged; other spaces are 404 and never listed", async () => {
    expect(await listed()).toEqual([keys.pub, keys.vip].sort());
    expect(await listed(await t.token({ kind: "user", sub: "gst_guest1" }))).toEqual([keys.pub, keys.vip].sort());
    const vip = expectStatus(await t.http("GET", `/space/api/v1/spaces/${keys.vip}`), 200).body.space;
    expect(vip).toMatchObject({ key: keys.vip, members_only: true, vip_creator: creator });
    for (const key of [keys.members, keys.staff]) {
      expectStatus(await t.http("GET", `/space/api/v1/spaces/${key}`), 404, "space.not_found");
      expectStatus(await t.http("GET", `/space/api/v1/spaces/${key}/threads`), 404, "space.not_found");
      expectStatus(await t.http("GET", `/space/s/${key}`), 404, "space.not_found");
    }
  });

  it("signed-in people also open members spaces; only moderators staff spaces (a person's token only via network's staff list)", async () => {
    expect(await listed(await user(stranger))).toEqual([keys.pub, keys.members, keys.vip].sort());
    expect(await listed(await user(staffer))).toEqual(Object.values(keys).sort());
    const service = await writerService(t);
    expect(await listed(service)).toEqual(Object.values(keys).sort());
    // A service acting for a person it does not vouch as staff reads as that person; vouching opens staff spaces.
    expect(await listed(service, { "x-pf-subject": stranger })).toEqual([keys.pub, keys.members, keys.vip].sort());
    expect(await listed(service, { "x-pf-subject": stranger, "x-pf-staff": "1" })).toEqual(Object.values(keys).sort());
    expectStatus(await t.http("GET", `/space/api/v1/spaces/${keys.staff}`, { token: await user(stranger) }), 404);
  });

  it("a VIP space's threads, thread, feed and writes are 403 vip.members_only without the entitlement", async () => {
    const { thread } = await startThread(t, keys.vip, member, "Members talk");
    const base = `/space/api/v1/spaces/${keys.vip}/threads`;
    for (const token of [undefined, await user(stranger)]) {
      expectStatus(await t.http("GET", base, { token }), 403, "vip.members_only");
      expectStatus(await t.http("GET", `${base}/${thread.slug}`, { token }), 403, "vip.members_only");
      expectStatus(await t.http("GET", `/space/s/${keys.vip}/t/${thread.slug}`, { token }), 403, "vip.members_only");
      expectStatus(await t.http("GET", `/space/s/${keys.vip}/feed.xml`, { token }), 403, "vip.members_only");
    }
    const token = await user(stranger);
    expectStatus(await t.http("POST", base, { token, body: { title: "x", body: "y" } }), 403, "vip.members_only");
    expectStatus(
      await t.http("POST", `${base}/${thread.slug}/posts`, { token, body: { body: "y" } }),
      403,
      "vip.members_only",
    );
    expectStatus(
      await t.http("POST", `${base}/${thread.slug}/votes`, { token, body: { value: 1 } }),
      403,
      "vip.members_only",
    );
    const post = thread.first_post_id;
    expectStatus(
      await t.http("PUT", `/space/api/v1/posts/${post}`, { token, body: { body: "z" } }),
      403,
      "vip.members_only",
    );
    // The entitled member reads and writes.
    const mine = await user(member);
    expect(expectStatus(await t.http("GET", base, { token: mine }), 200).body.threads).toHaveLength(1);
    expectStatus(await t.http("POST", `${base}/${thread.slug}/posts`, { token: mine, body: { body: "Hi" } }), 201);
  });
});

describe("authorship: a person, or AI output with no author", () => {
  it("writes as the token's person or a service's X-PF-Subject; AI output names no person and is labelled", async () => {
    const alice = person("alice");
    const own = await startThread(t, keys.pub, alice, "Mine");
    expect(own.thread.author).toEqual({ person: alice });
    expect(own.post).toMatchObject({ author: { person: alice }, ai: false, revision: 1 });

    const service = await writerService(t);
    const path = `/space/api/v1/spaces/${keys.pub}/threads`;
    const relayed = await t.http("POST", path, {
      token: service,
      headers: { "x-pf-subject": alice },
      body: { title: "Via", body: "x" },
    });
    expect(expectStatus(relayed, 201).body.thread.author).toEqual({ person: alice });

    const ai = expectStatus(
      await t.http("POST", path, {
        token: service,
        headers: { "x-pf-origin": "ai" },
        body: { title: "Summary", body: "AI text" },
      }),
      201,
    ).body;
    expect(ai.thread.ai).toBe(true);
    expect(ai.thread.author.person).toBeUndefined();
    expect(ai.thread.author.ai).toMatchObject({ service: "svc:blog" });
  });

  it("edits and deletes only one's own posts (403 post.not_author); AI posts only by their service's AI output", async () => {
    const [alice, bob] = [person("alice"), person("bob")];
    const { thread } = await startThread(t, keys.pub, alice, "Ownership");
    const post = `/space/api/v1/posts/${thread.first_post_id}`;
    expectStatus(
      await t.http("PUT", post, { token: await user(bob), body: { body: "hijack" } }),
      403,
      "post.not_author",
    );
    expectStatus(await t.http("DELETE", post, { token: await user(bob) }), 403, "post.not_author");
    const edited = expectStatus(
      await t.http("PUT", post, { token: await user(alice), body: { body: "**new**", expected_revision: 1 } }),
      200,
    );
    expect(edited.body.post).toMatchObject({
      body: "**new**",
      body_html: "<p><strong>new</strong></p>\n",
      revision: 2,
    });
    expectStatus(
      await t.http("PUT", post, { token: await user(alice), body: { body: "late", expected_revision: 1 } }),
      412,
      "revision.conflict",
    );

    const reply = expectStatus(
      await t.http("POST", `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}/posts`, {
        token: await writerService(t),
        headers: { "x-pf-origin": "ai" },
        body: { body: "AI reply" },
      }),
      201,
    ).body.post;
    const aiPost = `/space/api/v1/posts/${reply.id}`;
    const other = await writerService(t, "news");
    expectStatus(
      await t.http("PUT", aiPost, { token: other, headers: { "x-pf-origin": "ai" }, body: { body: "x" } }),
      403,
      "post.not_author",
    );
    expectStatus(
      await t.http("PUT", aiPost, { token: await user(alice), body: { body: "x" } }),
      403,
      "post.not_author",
    );
    expectStatus(
      await t.http("PUT", aiPost, {
        token: await writerService(t),
        headers: { "x-pf-origin": "ai" },
        body: { body: "fixed" },
      }),
      200,
    );
  });

  it("deleting a thread leaves a tombstone that keeps its replies; a deleted post keeps no body", async () => {
    const [alice, bob] = [person("alice"), person("bob")];
    const { thread } = await startThread(t, keys.pub, alice, "Short lived", "secret body");
    const path = `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}`;
    expectStatus(await t.http("POST", `${path}/posts`, { token: await user(bob), body: { body: "a reply" } }), 201);
    expectStatus(await t.http("DELETE", path, { token: await user(bob) }), 403, "post.not_author");
    const gone = expectStatus(await t.http("DELETE", path, { token: await user(alice) }), 200).body;
    expect(gone.thread).toMatchObject({ deleted: true });
    expect(gone.post).toMatchObject({ deleted: true });
    const read = expectStatus(await t.http("GET", path), 200).body;
    expect(read.thread.title).toBe("");
    expect(read.thread.first_post).toMatchObject({ body: "", body_html: "", deleted: true });
    expect(read.posts.map((p: { body: string }) => p.body)).toEqual(["a reply"]);
    expectStatus(
      await t.http("POST", `${path}/posts`, { token: await user(bob), body: { body: "more" } }),
      409,
      "thread.deleted",
    );
    const listing = expectStatus(
      await t.http("GET", `/space/api/v1/spaces/${keys.pub}/threads?order=THREAD_ORDER_NEW`),
      200,
    ).body;
    expect(listing.threads.map((each: { id: string }) => each.id)).not.toContain(thread.id);
  });

  it("renders Markdown to sanitized HTML: script, event handlers and javascript: URLs never survive", async () => {
    const body = "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1)) **ok**";
    const { post } = await startThread(t, keys.pub, person(), "<b>Title</b> & co", body);
    expect(post.body).toBe(body);
    // What is left is inert text: no script or img element, no handler attribute, no javascript: link.
    expect(post.body_html).not.toMatch(/<script|<img|<[^>]+\son\w+=|href="javascript:/i);
    expect(post.body_html).toContain("&lt;script&gt;");
    expect(post.body_html).toContain("<strong>ok</strong>");
  });

  it("keeps thread titles plain text: tags sent in one are removed, and a title of tags alone is 400", async () => {
    const { thread } = await startThread(t, keys.pub, person(), "<b>Bold</b> <script>alert(1)</script>move & a < b");
    expect(thread.title).toBe("Bold move & a < b");
    const read = expectStatus(await t.http("GET", `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}`), 200);
    expect(read.body.thread.title).toBe("Bold move & a < b");
    const token = await user(person());
    const path = `/space/api/v1/spaces/${keys.pub}/threads`;
    const empty = await t.http("POST", path, { token, body: { title: "<img src=x onerror=alert(1)>", body: "x" } });
    expect(expectStatus(empty, 400).body.field).toBe("title");
  });

  it("refuses bad input by field name (400), never 5xx", async () => {
    const token = await user(person());
    const path = `/space/api/v1/spaces/${keys.pub}/threads`;
    expect(expectStatus(await t.http("POST", path, { token, body: { body: "x" } }), 400).body.field).toBe("title");
    expect(
      expectStatus(await t.http("POST", path, { token, body: { title: "x", body: "y".repeat(20_001) } }), 400).body
        .field,
    ).toBe("body");
    const { thread } = await startThread(t, keys.pub, person(), "Votes");
    const votes = `${path}/${thread.slug}/votes`;
    expect(expectStatus(await t.http("POST", votes, { token, body: { value: 2 } }), 400).body.field).toBe("value");
    expect(expectStatus(await t.http("GET", `${path}?cursor=bogus`), 400).body.field).toBe("cursor");
    expectStatus(await t.http("GET", `${path}/no-such-thread`), 404, "thread.not_found");
    expectStatus(await t.http("GET", `/space/api/v1/spaces/no-such-space`), 404, "space.not_found");
  });
});

describe("votes: one per person per thread, scores consistent with votes", () => {
  it("50 concurrent votes by one person count one; votes of others add up; withdrawing removes one", async () => {
    const { thread } = await startThread(t, keys.pub, person(), "Storm");
    const votes = `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}/votes`;
    const voter = await user(person("voter"));
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => t.http("POST", votes, { token: voter, body: { value: 1 } })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
    const others = await Promise.all([person(), person(), person()].map(user));
    await Promise.all(others.map((token, i) => t.http("POST", votes, { token, body: { value: i === 0 ? -1 : 1 } })));
    const read = async (token?: string) =>
      expectStatus(await t.http("GET", `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}`, { token }), 200).body
        .thread;
    expect(await read(voter)).toMatchObject({ score: 2, my_vote: 1 });
    expectStatus(await t.http("POST", votes, { token: voter, body: { value: 0 } }), 200);
    expect(await read(voter)).toMatchObject({ score: 1 });
    expect((await read(voter)).my_vote).toBe(0);
  });
});

describe("community's forwarded moderation: locks, pins, audit", () => {
  it("a locked thread refuses replies and votes (409 thread.locked) until unlocked; every action audited", async () => {
    const internal = await communityClient(t);
    const { thread } = await startThread(t, keys.pub, person(), "To lock");
    const locked = await internal.lockThread(
      {
        threadId: thread.id,
        locked: true,
        idempotencyKey: `lock-${thread.id}`,
        reason: "flame war",
        relayedBy: "blog",
      },
      {},
    );
    expect(locked.thread?.locked).toBe(true);
    expect(locked.audit).toMatchObject({
      action: "lock",
      actor: "svc:community",
      relayedBy: "blog",
      reason: "flame war",
    });
    const token = await user(person());
    const path = `/space/api/v1/spaces/${keys.pub}/threads/${thread.slug}`;
    expectStatus(await t.http("POST", `${path}/posts`, { token, body: { body: "late" } }), 409, "thread.locked");
    expectStatus(await t.http("POST", `${path}/votes`, { token, body: { value: 1 } }), 409, "thread.locked");
    await internal.lockThread({ threadId: thread.id, locked: false, idempotencyKey: `unlock-${thread.id}` }, {});
    expectStatus(await t.http("POST", `${path}/posts`, { token, body: { body: "now" } }), 201);
  });
});

describe("events, in the transaction of each change", () => {
  it("space.thread.created and space.post.created for a new thread; space.post.edited for an edit", async () => {
    const alice = person("ev");
    const { thread } = await startThread(t, keys.pub, alice, "Evented");
    await t.http("PUT", `/space/api/v1/posts/${thread.first_post_id}`, {
      token: await user(alice),
      body: { body: "e" },
    });
    const subjects = (await outboxEvents(t, "space", thread.id)).map((event) => event.subject);
    expect(subjects).toEqual(["space.thread.created", "space.post.created", "space.post.edited"]);
  });
});
