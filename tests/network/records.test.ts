import { beforeAll, describe, expect, it } from "vitest";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"], env: { PF_NETWORK_GITHUB_TOKEN: "ghp_from_env" } });

describe("module records", () => {
  let space: string;
  let reader: string;
  beforeAll(async () => {
    space = await t.token({ kind: "service", svc: "space", caps: ["network.modules.read", "network.modules.write"] });
    reader = await t.token({ kind: "service", svc: "blog", caps: ["network.modules.read"], ns: ["space.prefs"] });
  });

  it("creates (201, revision 1, ETag), then updates under If-Match", async () => {
    const path = "/network/internal/modules/space.prefs/usr_m1";
    const created = await t.http("PUT", path, { token: space, body: { record: { theme: "dark" } } });
    expect(created.status).toBe(201);
    expect(created.headers.get("etag")).toBe('"1"');
    expect(created.body).toMatchObject({
      namespace: "space.prefs",
      subject: "usr_m1",
      revision: "1",
      record: { theme: "dark" },
      written_by: "space",
    });
    const updated = await t.http("PUT", path, {
      token: space,
      body: { record: { theme: "light" } },
      headers: { "if-match": '"1"' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.revision).toBe("2");
    const read = await t.http("GET", path, { token: reader });
    expect(read.status).toBe(200);
    expect(read.headers.get("etag")).toBe('"2"');
    expect(read.body.record).toEqual({ theme: "light" });
  });

  it("answers 412 revision.conflict on a stale revision, 428 without one", async () => {
    const path = "/network/internal/modules/space.prefs/usr_m6";
    await t.http("PUT", path, { token: space, body: { record: { x: 0 } } });
    await t.http("PUT", path, { token: space, body: { record: { x: 0 } }, headers: { "if-match": '"1"' } });
    const stale = await t.http("PUT", path, {
      token: space,
      body: { record: { x: 1 } },
      headers: { "if-match": '"1"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: "revision.conflict", revision: "2" });
    const blind = await t.http("PUT", path, { token: space, body: { record: { x: 1 } } });
    expect(blind.status).toBe(428);
    const viaBody = await t.http("PUT", path, { token: space, body: { record: { x: 1 }, expected_revision: 1 } });
    expect(viaBody.status).toBe(412);
  });

  it("compares If-Match strongly: a weak tag never matches, * matches any existing record", async () => {
    const target = "/network/internal/modules/space/usr_m5";
    expect(
      (await t.http("PUT", target, { token: space, body: { record: { v: 0 } }, headers: { "if-match": "*" } })).status,
    ).toBe(412);
    expect((await t.http("PUT", target, { token: space, body: { record: { v: 1 } } })).status).toBe(201);
    expect(
      (await t.http("PUT", target, { token: space, body: { record: { v: 2 } }, headers: { "if-match": 'W/"1"' } }))
        .body,
    ).toMatchObject({ status: 412, code: "revision.conflict" });
    const any = await t.http("PUT", target, { token: space, body: { record: { v: 3 } }, headers: { "if-match": "*" } });
    expect(any.status).toBe(200);
    expect(any.body.revision).toBe("2");
  });

  it("lets one of two concurrent writers of the same revision win", async () => {
    const target = "/network/internal/modules/space/usr_m2";
    await t.http("PUT", target, { token: space, body: { record: { n: 0 } } });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.http("PUT", target, { token: space, body: { record: { n: i } }, headers: { "if-match": "1" } }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(7);
  });

  it("writes only in a namespace the calling service owns (403 modules.namespace_not_owned)", async () => {
    const blog = await t.token({ kind: "service", svc: "blog", caps: ["network.modules.write"] });
    const answer = await t.http("PUT", "/network/internal/modules/space.prefs/usr_m3", {
      token: blog,
      body: { record: {} },
    });
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe("modules.namespace_not_owned");
    const person = await t.http("PUT", "/network/internal/modules/space/usr_m3", {
      token: await t.token({ kind: "user", sub: "usr_m3" }),
      body: { record: {} },
    });
    expect(person.body.code).toBe("auth.people_refused");
    const app = await t.http("PUT", "/network/internal/modules/space/usr_m3", {
      token: await t.token({ kind: "app", app_id: "a1", fp: true, caps: ["network.modules.write"], ns: ["space"] }),
      body: { record: {} },
    });
    expect(app.body.code).toBe("modules.namespace_not_owned");
  });

  it("reads only in a granted namespace; people read none", async () => {
    const path = "/network/internal/modules/space.prefs/usr_m7";
    expect((await t.http("PUT", path, { token: space, body: { record: { theme: "dark" } } })).status).toBe(201);
    const stranger = await t.token({ kind: "service", svc: "deals", caps: ["network.modules.read"] });
    const refused = await t.http("GET", path, { token: stranger });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("modules.namespace_not_granted");
    const granted = await t.http("GET", path, {
      token: await t.token({
        kind: "app",
        app_id: "a1",
        fp: true,
        caps: ["network.modules.read"],
        ns: ["space.prefs"],
      }),
    });
    expect(granted.status).toBe(200);
    const own = await t.http("GET", path, { token: await t.token({ kind: "user", sub: "usr_m1" }) });
    expect(own.body).toMatchObject({ status: 403, code: "auth.people_refused" });
  });

  it("answers 404 modules.not_found and 400 for bad addresses or bodies", async () => {
    const missing = await t.http("GET", "/network/internal/modules/space/usr_none1", { token: space });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("modules.not_found");
    for (const [method, target, body, headers] of [
      ["GET", "/network/internal/modules/Space!/usr_m1", undefined, {}],
      ["GET", "/network/internal/modules/space/bob", undefined, {}],
      ["PUT", "/network/internal/modules/space/usr_m1", { record: "text" }, {}],
      ["PUT", "/network/internal/modules/space/usr_m1", { record: {} }, { "if-match": "abc" }],
    ] as const) {
      const answer = await t.http(method, target, { token: space, body, headers });
      expect(answer.status, target).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
    }
  });
});

describe("code-hosting token", () => {
  const path = "/network/internal/integrations/github-token";

  it("serves the environment setting, then the owner's admin setting, never echoing it back", async () => {
    const token = await t.token({ kind: "service", svc: "codes", caps: ["network.integration.github.read"] });
    const fromEnv = await t.http("GET", path, { token });
    expect(fromEnv.status).toBe(200);
    expect(fromEnv.body).toMatchObject({ token: "ghp_from_env", source: "environment", scope: "public_repo:read" });
    expect(fromEnv.headers.get("cache-control")).toBe("no-store");

    const adminToken = await t.token({ kind: "service", svc: "network", caps: ["network.admin"] });
    const admin = t.client(NetworkAdminService, adminToken);
    await admin.upsertSubject({ id: "usr_boss1", display: { displayName: "Boss" } });
    await admin.setStaff({ subject: "usr_boss1", role: StaffRole.OWNER });
    await admin.setStaff({ subject: "usr_helper1", role: StaffRole.ADMIN });
    const asPerson = (subject: string) => ({ headers: { "x-pf-subject": subject } });
    // Only the owner sets it, through a service acting for them.
    await expect(admin.setGithubToken({ token: "ghp_nope" })).rejects.toThrow(/person/);
    await expect(admin.setGithubToken({ token: "ghp_nope" }, asPerson("usr_helper1"))).rejects.toThrow(/owner/);
    const set = await admin.setGithubToken({ token: "ghp_admin_panel" }, asPerson("usr_boss1"));
    expect(set.source).toBe("admin");
    expect(set).not.toHaveProperty("token");
    const fromAdmin = await t.http("GET", path, { token });
    expect(fromAdmin.body).toMatchObject({ token: "ghp_admin_panel", source: "admin" });

    const ctx = t.platform.contexts.get("network")!;
    const [stored] = await ctx.orm.em
      .getConnection()
      .execute<{ value: string }[]>(`select value from network.settings`);
    expect(stored.value).not.toContain("ghp_admin_panel");

    await admin.setGithubToken({ token: "" }, asPerson("usr_boss1"));
    expect((await t.http("GET", path, { token })).body.source).toBe("environment");
  });

  it("is never given to people", async () => {
    const answer = await t.http("GET", path, { token: await t.token({ kind: "user", sub: "usr_owner1" }) });
    expect(answer.status).toBe(403);
  });
});

describe("notification push", () => {
  it("stores one notification per network user (201) and is idempotent by key", async () => {
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
    const body = {
      recipients: ["usr_n1", "usr_n2"],
      title: "New reply",
      body: "Someone replied",
      link: "/t/1",
      actor: "usr_n3",
      payload: { thread: "t1" },
      idempotency_key: "reply-t1-1",
    };
    const answer = await t.http("POST", "/network/internal/notifications/forum/reply", { token, body });
    expect(answer.status).toBe(201);
    expect(answer.body.notifications).toHaveLength(2);
    expect(answer.body.notifications[0]).toMatchObject({
      recipient: "usr_n1",
      kind: "forum/reply",
      title: "New reply",
      payload: { thread: "t1" },
    });
    expect(answer.body.notifications[0].id).toMatch(/^ntf_/);
    const retry = await t.http("POST", "/network/internal/notifications/forum/reply", { token, body });
    expect(retry.body).toEqual(answer.body);
    const ctx = t.platform.contexts.get("network")!;
    const [count] = await ctx.orm.em
      .getConnection()
      .execute<{ n: string }[]>(`select count(*) as n from network.notifications where kind = 'forum/reply'`);
    expect(Number(count.n)).toBe(2);
  });

  it("refuses recipients that are not translated network users, and empty notifications", async () => {
    const token = await t.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
    for (const [kind, body, field] of [
      ["mention", { recipients: ["legacy-42"], title: "x" }, "recipients[0]"],
      ["mention", { recipients: [], title: "x" }, "recipients"],
      ["mention", { recipients: ["usr_n1"] }, "title"],
      ["Bad Kind", { recipients: ["usr_n1"], title: "x" }, "kind"],
      ["mention", { recipients: ["usr_n1"], title: "x", link: "javascript:alert(1)" }, "link"],
      ["mention", { recipients: ["usr_n1"], title: "x", link: "//evil.example/x" }, "link"],
      ["mention", { recipients: ["usr_n1"], title: "x", payload: { blob: "x".repeat(17 * 1024) } }, "payload"],
    ] as const) {
      const answer = await t.http("POST", `/network/internal/notifications/${encodeURIComponent(kind)}`, {
        token,
        body,
      });
      expect(answer.status, field).toBe(400);
      expect(answer.body).toMatchObject({ code: "request.invalid", field });
    }
  });
});
