import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpaceAdminService } from "../../gen/pf/space/v1/admin_pb.js";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { ALL_COMMUNITY, as, expectStatus, fresh, person, serviceToken } from "../community/support.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";

// Issue 25, finding 4: community counted a forum write against the writer's limit before space had taken it, so a
// writer retrying through an outage was refused 429 once space was back. Space runs in a process of its own, reached
// through a proxy the test cuts; the limits are small so a few retries would exhaust them.
let space: TestPlatform;
let proxy: TcpProxy;
let t: TestPlatform;
let web: ReturnType<typeof as>;

const LIMIT = 2;

beforeAll(async () => {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { NATS_URL: "", PF_JWT_PRIVATE_KEY: key };
  space = await startTestPlatform({ services: ["space"], env: shared });
  const rpc = new URL(space.platform.rpcUrl);
  proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
  await proxy.open();
  t = await startTestPlatform({
    services: ["community"],
    env: {
      ...shared,
      PF_SPACE_URL: `http://127.0.0.1:${proxy.port}`,
      PF_CALL_TIMEOUT_MS: "3000",
      PF_COMMUNITY_POSTS_PER_10_MINUTES: String(LIMIT),
      PF_COMMUNITY_VOTES_PER_10_MINUTES: String(LIMIT),
    },
  });
  const admin = await space.token({ kind: "service", svc: "ops", caps: ["space.admin"] });
  await space.client(SpaceAdminService, admin).upsertSpace({
    key: "general",
    title: "General",
    visibility: SpaceVisibility.PUBLIC,
  });
  const token = await serviceToken(t, ALL_COMMUNITY);
  web = as(t, () => token);
}, 120_000);
afterAll(async () => {
  await t?.stop();
  await proxy?.cut();
  await space?.stop();
});

const thread = (author: string, key: string) =>
  web("POST", "/api/v1/spaces/general/threads", author, {
    title: `Thread ${key}`,
    body: "first",
    idempotency_key: key,
  });

describe("a forum write space refuses or does not answer counts nothing against the writer's limit", () => {
  it("retries through an outage get 503, and once space is back the retry with the same key is accepted", async () => {
    const author = person("w");
    const voter = person("v");
    const target = expectStatus(await thread(person("a"), fresh()), 201).body.thread;
    const key = `k-${fresh()}`;
    await proxy.cut();
    try {
      for (let i = 0; i < LIMIT + 2; i++) {
        expect(await thread(author, key)).toMatchObject({ status: 503, body: { code: "space.unavailable" } });
        const vote = await web("POST", `/api/v1/threads/${target.id}/votes`, voter, { value: 1, idempotency_key: key });
        expect(vote).toMatchObject({ status: 503, body: { code: "space.unavailable" } });
      }
    } finally {
      await proxy.open();
    }
    expectStatus(await thread(author, key), 201);
    expectStatus(
      await web("POST", `/api/v1/threads/${target.id}/votes`, voter, { value: 1, idempotency_key: key }),
      200,
    );

    // What space took still counts: the limit holds the writer to LIMIT accepted writes.
    for (let i = 1; i < LIMIT; i++) expectStatus(await thread(author, fresh()), 201);
    expect(await thread(author, fresh())).toMatchObject({
      status: 429,
      body: { code: "rate.limited", rule: "community.post.person" },
    });
  });

  it("a write space refuses (a thread that does not exist) gives its hit back too", async () => {
    const author = person("r");
    for (let i = 0; i < LIMIT + 2; i++) {
      const reply = await web("POST", "/api/v1/threads/thr_missing1/posts", author, { body: "a reply" });
      expect(reply.status).toBe(404);
    }
    const target = expectStatus(await thread(author, fresh()), 201).body.thread;
    expectStatus(await web("POST", `/api/v1/threads/${target.id}/posts`, author, { body: "a reply" }), 201);
  });

  it("a write whose answer never comes (held until community gives up on space) gives its hit back too", async () => {
    const author = person("h");
    const key = `h-${fresh()}`;
    proxy.holdAnswers = true;
    try {
      for (let i = 0; i < LIMIT + 1; i++) expect(await thread(author, key)).toMatchObject({ status: 503 });
    } finally {
      proxy.holdAnswers = false;
      // The held connections carry answers half-dropped: new ones start clean.
      proxy.reset();
    }
    // Space took the first (its answer was lost): the retry is answered with it, and counted once.
    const created = expectStatus(await thread(author, key), 201).body.thread;
    expectStatus(await thread(author, fresh()), 201);
    expect((await thread(author, fresh())).status).toBe(429);
    expect(created.title).toBe(`Thread ${key}`);
  });
});
