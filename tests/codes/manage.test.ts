import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { outboxEvents } from "../support/outbox.js";
import { appClaims, appManifest, codesCalls, freshApp } from "./support.js";

const t = usePlatform({ services: ["codes"] });
const codes = codesCalls(t);

describe("POST /apps/{app}/releases creates a draft from a validated manifest", () => {
  it("answers 201 with the draft: version and kind from the manifest, the compatibility range, the manifest as sent", async () => {
    const app = freshApp();
    const manifest = appManifest("1.2.3", { description: "Overlays.", homepage: "https://example.com/kit" });
    const answer = await codes.create(app, { manifest, compatibility: ">=1.0.0 <2.0.0" });
    expect(answer.status).toBe(201);
    expect(answer.body.release).toMatchObject({
      id: expect.stringMatching(/^rel_[0-9a-z]{26}$/),
      app,
      kind: "app",
      version: "1.2.3",
      compatibility: ">=1.0.0 <2.0.0",
      manifest,
      status: "RELEASE_STATUS_DRAFT",
      trust_tier: "TRUST_TIER_UNREVIEWED",
    });
    expect(answer.body.release.published_at).toBeUndefined();
  });

  it("takes a mod manifest, and the compatibility range from the manifest when the request sends none", async () => {
    const app = freshApp();
    const manifest = {
      kind: "mod",
      id: "rainbow-hud",
      name: "Rainbow HUD",
      version: "0.3.0-beta.1",
      game: "arena",
      capabilities: ["world.read"],
      compatibility: "^2.1",
    };
    const answer = await codes.create(app, { manifest });
    expect(answer.status).toBe(201);
    expect(answer.body.release).toMatchObject({ kind: "mod", version: "0.3.0-beta.1", compatibility: "^2.1" });
  });

  it("refuses another app's path: the token's sub must be app:<app in the path> (403 codes.app_mismatch, nothing stored)", async () => {
    const [mine, theirs] = [freshApp(), freshApp()];
    const answer = await codes.create(
      theirs,
      { manifest: appManifest("1.0.0"), compatibility: "*" },
      await codes.as(mine),
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: "codes.app_mismatch", app: theirs });
    // Nothing was made for either app: the same version is free for the right token.
    expect((await codes.create(theirs, { manifest: appManifest("1.0.0"), compatibility: "*" })).status).toBe(201);
  });

  it("refuses a service token holding the capability: only the app's own token manages (403 codes.app_mismatch)", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: ["codes.release.manage"], aud: "codes" });
    const answer = await codes.create("app1", { manifest: appManifest("1.0.0"), compatibility: "*" }, token);
    expect(answer.body).toMatchObject({ status: 403, code: "codes.app_mismatch" });
  });

  it("refuses a mod's token, even its app's own holding the capability: a mod manages no releases (403 auth.never_to_mods)", async () => {
    const app = freshApp();
    const id = await codes.release(app, "1.0.0");
    const mod = await t.token(appClaims(app, { mod: "mod_1" }));
    const created = await codes.create(app, { manifest: appManifest("2.0.0"), compatibility: "*" }, mod);
    expect(created.body).toMatchObject({ status: 403, code: "auth.never_to_mods" });
    const revoked = await codes.act(app, id, "revoke", {}, mod);
    expect(revoked.body).toMatchObject({ status: 403, code: "auth.never_to_mods" });
    const list = await t.http("GET", `/codes/api/v1/apps/${app}/releases`);
    expect(list.body.releases.releases.map((r: { status: string }) => r.status)).toEqual(["RELEASE_STATUS_PUBLISHED"]);
  });

  it("refuses an app token for the platform audience, even its own (401 auth.wrong_audience)", async () => {
    const app = freshApp();
    const token = await t.token(appClaims(app, { aud: "pf" }));
    const answer = await codes.create(app, { manifest: appManifest("1.0.0"), compatibility: "*" }, token);
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe("auth.wrong_audience");
  });

  it("answers 409 codes.version_exists for a version the app has already, drafts and build metadata included", async () => {
    const app = freshApp();
    const first = await codes.create(app, { manifest: appManifest("2.0.0"), compatibility: "*" });
    for (const version of ["2.0.0", "2.0.0+build.7"]) {
      const again = await codes.create(app, { manifest: appManifest(version), compatibility: "*" });
      expect(again.status, version).toBe(409);
      expect(again.body, version).toMatchObject({ code: "codes.version_exists", release: first.body.release.id });
    }
    // Another app may use the same version.
    expect((await codes.create(freshApp(), { manifest: appManifest("2.0.0"), compatibility: "*" })).status).toBe(201);
  });

  it("answers a retry with the same idempotency key with the first release", async () => {
    const app = freshApp();
    const body = { manifest: appManifest("3.0.0"), compatibility: "*", idempotency_key: "k-1" };
    const [first, retry] = [await codes.create(app, body), await codes.create(app, body)];
    expect(retry.status).toBe(201);
    expect(retry.body.release.id).toBe(first.body.release.id);
  });

  it("refuses an invalid manifest with 400 codes.manifest_invalid naming the JSON pointer; nothing stored", async () => {
    const app = freshApp();
    const mod = { kind: "mod", id: "rainbow-hud", name: "X", version: "1.0.0", game: "arena", capabilities: [] };
    const cases: [unknown, string][] = [
      [{ kind: "app", name: "X", version: "one" }, "/version"],
      [{ kind: "app", name: "X", version: "v1.0.0" }, "/version"],
      [{ kind: "app", version: "1.0.0" }, "/name"],
      [{ kind: "mod", name: "X", version: "1.0.0" }, "/id"],
      // A mod's manifest is the kit's mods/mod-manifest.v1: strict, so no member rides in unread.
      [{ ...mod, granted: ["world.read"] }, "/granted"],
      [{ ...mod, game_version: "^1" }, "/game_version"],
      [{ ...mod, capabilities: ["world-read.x"] }, "/capabilities/0"],
      [{ kind: "theme", name: "X", version: "1.0.0" }, "/kind"],
      [{ name: "X", version: "1.0.0", capabilities: ["ok.cap", "Not A Cap"] }, "/capabilities/1"],
      [{ name: "X", version: "1.0.0", compatibility: "latest" }, "/compatibility"],
      [{ name: "X", version: "1.0.0", trust_tier: "TRUST_TIER_VERIFIED" }, "/trust_tier"],
      [{ name: "X", version: "1.0.0", padding: "x".repeat(70_000) }, ""],
    ];
    for (const [manifest, pointer] of cases) {
      const answer = await codes.create(app, { manifest, compatibility: "*" });
      expect(answer.status, JSON.stringify(manifest).slice(0, 80)).toBe(400);
      expect(answer.body, pointer).toMatchObject({ code: "codes.manifest_invalid", field: "manifest", pointer });
    }
    // The version those tried is still free.
    expect((await codes.create(app, { manifest: appManifest("1.0.0"), compatibility: "*" })).status).toBe(201);
  });

  it("refuses a compatibility range that is missing, not a semver range, or disagrees with the manifest's (400 naming compatibility)", async () => {
    const app = freshApp();
    const bodies = [
      { manifest: appManifest("1.0.0") },
      { manifest: appManifest("1.0.0"), compatibility: "latest" },
      { manifest: appManifest("1.0.0", { compatibility: "^1" }), compatibility: "^2" },
    ];
    for (const body of bodies) {
      const answer = await codes.create(app, body);
      expect(answer.body, JSON.stringify(body)).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "compatibility",
      });
    }
  });

  it("refuses a trust tier sent through manage (400 naming it), never drops it", async () => {
    const app = freshApp();
    for (const field of ["trust_tier", "trust"]) {
      const answer = await codes.create(app, { manifest: appManifest("1.0.0"), compatibility: "*", [field]: 3 });
      expect(answer.body, field).toMatchObject({ status: 400, code: "request.invalid" });
      expect(answer.body.detail, field).toContain(field);
    }
  });

  it("refuses a malformed app in the path (400 naming app)", async () => {
    const token = await codes.as("bad app!");
    const answer = await t.http("POST", "/codes/api/v1/apps/bad%20app!/releases", {
      token,
      body: { manifest: appManifest("1.0.0"), compatibility: "*" },
    });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field: "app" });
  });
});

describe("publish, deprecate, revoke: draft → published → deprecated; revoked from any state, final", () => {
  it("publishes a draft (200, published_at set) and records codes.release.published", async () => {
    const app = freshApp();
    const id = await codes.release(app, "1.0.0", { draft: true });
    const answer = await codes.act(app, id, "publish");
    expect(answer.status).toBe(200);
    expect(answer.body.release).toMatchObject({
      id,
      status: "RELEASE_STATUS_PUBLISHED",
      published_at: expect.any(String),
    });
    expect((await outboxEvents(t, "codes", id)).map((event) => event.subject)).toEqual(["codes.release.published"]);
  });

  it("deprecates a published release with a reason and a published replacement of the same app", async () => {
    const app = freshApp();
    const [old, next] = [await codes.release(app, "1.0.0"), await codes.release(app, "1.1.0")];
    const answer = await codes.act(app, old, "deprecate", { reason: "Security fix in 1.1.0.", replacement: next });
    expect(answer.status).toBe(200);
    expect(answer.body.release).toMatchObject({
      status: "RELEASE_STATUS_DEPRECATED",
      deprecation_reason: "Security fix in 1.1.0.",
      replacement: next,
      deprecated_at: expect.any(String),
    });
    expect((await outboxEvents(t, "codes", old)).map((event) => event.subject)).toEqual([
      "codes.release.published",
      "codes.release.deprecated",
    ]);
  });

  it("deprecates without a replacement; refuses one without a reason (400 naming reason)", async () => {
    const app = freshApp();
    const id = await codes.release(app, "1.0.0");
    for (const body of [{}, { reason: "   " }, { reason: "x".repeat(501) }]) {
      const refused = await codes.act(app, id, "deprecate", body);
      expect(refused.body, JSON.stringify(body)).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "reason",
      });
    }
    const answer = await codes.act(app, id, "deprecate", { reason: "Unmaintained." });
    expect(answer.body.release).toMatchObject({ status: "RELEASE_STATUS_DEPRECATED", replacement: "" });
  });

  it("refuses a replacement that is not a published release of the same app (422 codes.replacement_invalid)", async () => {
    const [app, other] = [freshApp(), freshApp()];
    const id = await codes.release(app, "1.0.0");
    const draft = await codes.release(app, "1.1.0", { draft: true });
    const deprecated = await codes.release(app, "0.9.0");
    await codes.act(app, deprecated, "deprecate", { reason: "Old." });
    const foreign = await codes.release(other, "2.0.0");
    for (const replacement of [draft, deprecated, foreign, id, "rel_0000000000000000000000000"]) {
      const answer = await codes.act(app, id, "deprecate", { reason: "Replaced.", replacement });
      expect(answer.status, replacement).toBe(422);
      expect(answer.body, replacement).toMatchObject({ code: "codes.replacement_invalid", replacement });
    }
    const unchanged = await t.http("GET", `/codes/api/v1/releases/${id}`);
    expect(unchanged.body.release.status).toBe("RELEASE_STATUS_PUBLISHED");
  });

  it("refuses a transition its state does not take (409 codes.release_state)", async () => {
    const app = freshApp();
    const draft = await codes.release(app, "1.0.0", { draft: true });
    const published = await codes.release(app, "1.1.0");
    const refusals: [string, string, Record<string, unknown>][] = [
      [draft, "deprecate", { reason: "Not yet out." }],
      [published, "publish", {}],
    ];
    for (const [id, action, body] of refusals) {
      const answer = await codes.act(app, id, action, body);
      expect(answer.status, action).toBe(409);
      expect(answer.body, action).toMatchObject({ code: "codes.release_state" });
    }
    const deprecateDraft = await codes.act(app, draft, "deprecate", { reason: "x" });
    expect(deprecateDraft.body.release_status).toBe("draft");
    await codes.act(app, published, "deprecate", { reason: "Old." });
    const republish = await codes.act(app, published, "publish");
    expect(republish.body).toMatchObject({ status: 409, code: "codes.release_state", release_status: "deprecated" });
  });

  it("revokes from any state with an optional reason; revoked is final: every action after it is 409", async () => {
    const app = freshApp();
    const draft = await codes.release(app, "1.0.0", { draft: true });
    const published = await codes.release(app, "1.1.0");
    const deprecated = await codes.release(app, "1.2.0");
    await codes.act(app, deprecated, "deprecate", { reason: "Old." });
    for (const id of [draft, published, deprecated]) {
      const answer = await codes.act(app, id, "revoke", { reason: "Compromised key." });
      expect(answer.status, id).toBe(200);
      expect(answer.body.release, id).toMatchObject({
        status: "RELEASE_STATUS_REVOKED",
        revocation_reason: "Compromised key.",
        revoked_at: expect.any(String),
      });
      for (const [action, body] of [
        ["publish", {}],
        ["deprecate", { reason: "x" }],
        ["revoke", {}],
      ] as const) {
        const after = await codes.act(app, id, action, body);
        expect(after.body, `${action} after revoke`).toMatchObject({ status: 409, code: "codes.release_state" });
      }
    }
    // Revoking a draft never published tells nobody: it was never public.
    expect(await outboxEvents(t, "codes", draft)).toEqual([]);
    expect((await outboxEvents(t, "codes", published)).map((event) => event.subject)).toEqual([
      "codes.release.published",
      "codes.release.revoked",
    ]);
  });
});

describe("on /releases/{id} routes the release's app must be the token's", () => {
  it("another app's published release: 403 codes.app_mismatch on every action, the release unchanged", async () => {
    const [owner, intruder] = [freshApp(), freshApp()];
    const id = await codes.release(owner, "1.0.0");
    const token = await codes.as(intruder);
    for (const [action, body] of [
      ["publish", {}],
      ["deprecate", { reason: "Mine now." }],
      ["revoke", {}],
    ] as const) {
      const answer = await codes.act(owner, id, action, body, token);
      expect(answer.status, action).toBe(403);
      expect(answer.body, action).toMatchObject({ code: "codes.app_mismatch", app: owner });
    }
    expect((await t.http("GET", `/codes/api/v1/releases/${id}`)).body.release.status).toBe("RELEASE_STATUS_PUBLISHED");
  });

  it("another app's draft answers 404 as a missing release does, and stays a draft", async () => {
    const [owner, intruder] = [freshApp(), freshApp()];
    const id = await codes.release(owner, "1.0.0", { draft: true });
    const token = await codes.as(intruder);
    for (const target of [id, "rel_0000000000000000000000000"]) {
      const answer = await codes.act(owner, target, "publish", {}, token);
      expect(answer.status, target).toBe(404);
      expect(answer.body, target).toMatchObject({ code: "codes.release_not_found" });
    }
    expect((await codes.act(owner, id, "publish")).body.release.status).toBe("RELEASE_STATUS_PUBLISHED");
  });

  it("a malformed release id is 400 naming id", async () => {
    const app = freshApp();
    const answer = await codes.act(app, "not-an-id", "publish");
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field: "id" });
  });
});
