import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SpaceAdminService } from "../../gen/pf/space/v1/admin_pb.js";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";
import { ALL_COMMUNITY, as, expectStatus, fresh, person, serviceToken, WRITER } from "./support.js";

// Space in a process of its own, reached over gRPC through a proxy the test cuts: space really stops answering.
let space: TestPlatform;
let proxy: TcpProxy;
let t: TestPlatform;
let web: ReturnType<typeof as>;

beforeAll(async () => {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { NATS_URL: "", PF_JWT_PRIVATE_KEY: key };
  space = await startTestPlatform({ services: ["space"], env: shared });
  const rpc = new URL(space.platform.rpcUrl);
  proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
  await proxy.open();
  t = await startTestPlatform({
    services: ["community"],
    env: { ...shared, PF_SPACE_URL: `http://127.0.0.1:${proxy.port}`, PF_CALL_TIMEOUT_MS: "3000" },
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

/** Space's own audit of a post or thread, read from its schema. */
const spaceAudit = (target: string) =>
  (space.platform.contexts.get("space") as ServiceContext).transaction((em) =>
    em.getConnection().execute<{ action: string; actor: string; relayed_by: string; reason: string }[]>(
      `select action, actor, relayed_by, reason from ${qualified(em, "moderation_audit")}
         where post_id = ? or thread_id = ? order by created_at`,
      [target, target],
      "all",
      em.getTransactionContext(),
    ),
  );

const newThread = async (author: string) =>
  expectStatus(
    await web("POST", "/api/v1/spaces/general/threads", author, { title: `Thread ${fresh()}`, body: "first post" }),
    201,
  ).body.thread;

const logRecord = async (id: string) => {
  const log = expectStatus(await web("GET", "/api/v1/moderation/log?limit=200", undefined), 200).body.records;
  return log.find((each: { id: string }) => each.id === id);
};

describe("forum writes through community reach space as the acting subject", () => {
  it("a person creates, replies, votes and edits their own post; another person's edit is space's refusal", async () => {
    const author = person("a");
    const thread = await newThread(author);
    expect(thread).toMatchObject({ space: "general", author: { person: author } });
    const reply = expectStatus(
      await web("POST", `/api/v1/threads/${thread.id}/posts`, person("r"), { body: "a reply" }),
      201,
    ).body.post;
    expect(reply.thread_id).toBe(thread.id);
    const voted = expectStatus(
      await web("POST", `/api/v1/threads/${thread.id}/votes`, person("v"), { value: 1 }),
      200,
    ).body;
    expect(voted.thread.score).toBe(1);
    const edited = expectStatus(
      await web("PUT", `/api/v1/posts/${thread.first_post_id}`, author, { body: "edited" }),
      200,
    ).body;
    expect(edited.post.body).toBe("edited");
    expect(edited.moderation).toBeUndefined();
    const foreign = await web("PUT", `/api/v1/posts/${thread.first_post_id}`, person("other"), { body: "hijack" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("post.not_author");
  });

  it("AI output creates a thread with no author, labelled AI", async () => {
    const thread = expectStatus(
      await web(
        "POST",
        "/api/v1/spaces/general/threads",
        undefined,
        { title: "AI digest", body: "summary" },
        { "x-pf-origin": "ai" },
      ),
      201,
    ).body.thread;
    expect(thread.ai).toBe(true);
    expect(thread.author?.person).toBeUndefined();
  });

  it("AI output naming a person stays AI output: no author, credited to the sending service, never the person's", async () => {
    const asker = person("asker");
    const ai = { "x-pf-origin": "ai" };
    const thread = expectStatus(
      await web("POST", "/api/v1/spaces/general/threads", asker, { title: `AI ${fresh()}`, body: "summary" }, ai),
      201,
    ).body.thread;
    expect(thread).toMatchObject({ ai: true, author: { ai: { service: "svc:web" } } });
    expect(JSON.stringify(thread)).not.toContain(asker);
    const reply = expectStatus(
      await web("POST", `/api/v1/threads/${thread.id}/posts`, asker, { body: "more" }, ai),
      201,
    ).body.post;
    expect(reply).toMatchObject({ ai: true, author: { ai: { service: "svc:web" } } });
    // The person named beside it does not own it.
    const byAsker = await web("PUT", `/api/v1/posts/${reply.id}`, asker, { body: "mine now" });
    expect(byAsker.body).toMatchObject({ status: 403, code: "post.not_author" });
  });

  it("AI posts are credited to the service that sent them: another service's AI output neither edits nor deletes them", async () => {
    const ai = { "x-pf-origin": "ai" };
    // Writers only: a service holding moderation acting for nobody would moderate instead.
    const [writerToken, botToken] = [await serviceToken(t, WRITER, "writer"), await serviceToken(t, WRITER, "bot")];
    const [writer, bot] = [as(t, () => writerToken), as(t, () => botToken)];
    const thread = expectStatus(
      await writer("POST", "/api/v1/spaces/general/threads", undefined, { title: `AI ${fresh()}`, body: "digest" }, ai),
      201,
    ).body.thread;
    expect(thread.author).toMatchObject({ ai: { service: "svc:writer" } });
    const post = `/api/v1/posts/${thread.first_post_id}`;
    expect((await bot("PUT", post, undefined, { body: "hijack" }, ai)).body).toMatchObject({
      status: 403,
      code: "post.not_author",
    });
    expect((await bot("DELETE", post, undefined, undefined, ai)).body).toMatchObject({
      status: 403,
      code: "post.not_author",
    });
    const revised = expectStatus(await writer("PUT", post, undefined, { body: "revised" }, ai), 200).body;
    expect(revised.post).toMatchObject({ body: "revised", author: { ai: { service: "svc:writer" } } });
  });

  it("a vote is a person's own act: AI output naming a person votes for nobody (403 auth.person_required)", async () => {
    const thread = await newThread(person("a"));
    const answer = await web(
      "POST",
      `/api/v1/threads/${thread.id}/votes`,
      person("v"),
      { value: 1 },
      { "x-pf-origin": "ai" },
    );
    expect(answer.body).toMatchObject({ status: 403, code: "auth.person_required" });
  });
});

describe("forum moderation through community: applied by space, audited in both", () => {
  it("a service holding both capabilities acting for an unvouched person gets the writer's rule; vouched staff moderate", async () => {
    const thread = await newThread(person("a"));
    const unvouched = await web("DELETE", `/api/v1/posts/${thread.first_post_id}`, person("notstaff"));
    expect(unvouched.status).toBe(403);
    expect(unvouched.body.code).toBe("post.not_author");

    const staff = person("staff");
    const removed = expectStatus(
      await web("DELETE", `/api/v1/posts/${thread.first_post_id}?reason=spam`, staff, undefined, { "x-pf-staff": "1" }),
      200,
    ).body;
    expect(removed.moderation).toMatchObject({
      action: "delete_post",
      actor: staff,
      relayed_by: "web",
      status: "applied",
    });
    expect(removed.post.deleted).toBe(true);
    expect(await spaceAudit(thread.first_post_id)).toEqual([
      expect.objectContaining({ action: "delete_post", actor: staff, relayed_by: "web", reason: "spam" }),
    ]);
  });

  it("pin and lock are moderators' only, applied in space", async () => {
    const thread = await newThread(person("a"));
    const locked = expectStatus(
      await web("PUT", `/api/v1/threads/${thread.id}/lock`, undefined, { value: true, reason: "resolved" }),
      200,
    ).body;
    expect(locked.thread.locked).toBe(true);
    expect(locked.moderation).toMatchObject({ action: "lock", value: "true", actor: "svc:web", status: "applied" });
    const reply = await web("POST", `/api/v1/threads/${thread.id}/posts`, person("r"), { body: "late" });
    expect(reply.status).toBe(409);
    expect(reply.body.code).toBe("thread.locked");
  });

  it("space refusing leaves the record failed, never applied", async () => {
    const missing = await web("DELETE", "/api/v1/posts/pst_missing1?reason=spam&idempotency_key=f1", undefined);
    expect(missing.status).toBe(404);
    const log = expectStatus(await web("GET", "/api/v1/moderation/log?status=failed", undefined), 200).body.records;
    expect(log.find((each: { target: { id: string } }) => each.target.id === "pst_missing1")).toMatchObject({
      status: "failed",
      failure: "post.not_found",
    });
  });

  it("with space unreachable the action is pending (202), claimed by neither side, and applied once space is back", async () => {
    const thread = await newThread(person("a"));
    await proxy.cut();
    const path = `/api/v1/posts/${thread.first_post_id}?reason=abuse&idempotency_key=down-${fresh()}`;
    const pending = expectStatus(await web("DELETE", path, undefined), 202).body.moderation;
    expect(pending).toMatchObject({ status: "pending", action: "delete_post" });
    expect(pending.settled_at).toBeUndefined();
    // A retry with the same key finds the same record, still pending.
    expect(expectStatus(await web("DELETE", path, undefined), 202).body.moderation.id).toBe(pending.id);
    expect((await logRecord(pending.id)).status).toBe("pending");
    expect(await spaceAudit(thread.first_post_id)).toEqual([]);

    await proxy.open();
    await until(async () => (await logRecord(pending.id)).status === "applied", 30_000);
    expect(await spaceAudit(thread.first_post_id)).toEqual([
      expect.objectContaining({ action: "delete_post", actor: "svc:community", relayed_by: "web", reason: "abuse" }),
    ]);
    // Space applied it once, though the request and the effect both asked.
    const retried = expectStatus(await web("DELETE", path, undefined), 200).body.moderation;
    expect(retried).toMatchObject({ id: pending.id, status: "applied" });
  });
});
