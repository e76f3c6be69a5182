import { beforeAll, describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { contentPack, gamesCall, installed, manifest, managerToken } from "./support.js";

const t = usePlatform({ services: ["games"] });
let token: string;
let as: ReturnType<typeof gamesCall>;
let anonymous: ReturnType<typeof gamesCall>;
beforeAll(async () => {
  token = await managerToken(t);
  as = gamesCall(t, token);
  anonymous = gamesCall(t);
});

/** The events the outbox holds for one install, as subject and payload. */
const eventsOf = async (id: string) =>
  (await outboxEvents(t, "games", id)).map((row) => ({ subject: row.subject, ...JSON.parse(row.payload) }));

describe("install (POST /mods)", () => {
  it("installs a manifest with its content pack: 201, disabled, nothing granted, unreviewed; audited and published", async () => {
    const sent = manifest();
    const answer = await as("POST", "/mods", { manifest: sent, content_pack: contentPack(), server: "eu-1" });
    expect(answer.status).toBe(201);
    const install = answer.body.install;
    expect(install).toMatchObject({
      mod_id: sent.id,
      name: "Better Swords",
      version: "1.0.0",
      game: "arena",
      server: "eu-1",
      status: "MOD_STATUS_DISABLED",
      trust_tier: "TRUST_TIER_UNREVIEWED",
      requested_capabilities: ["chat.send", "inventory.write", "world.read"],
      granted_capabilities: [],
      manifest: sent,
      content_pack: contentPack(),
      revision: 1,
    });
    expect(install.id).toMatch(/^mod_[0-9a-z]{26}$/);
    expect(install.content_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(answer.body.changed).toBe(true);
    const [event] = await eventsOf(install.id);
    expect(event).toMatchObject({
      subject: "games.mod.installed",
      action: "installed",
      install_id: install.id,
      revision: 1,
      status: "MOD_STATUS_DISABLED",
      active_capabilities: [],
      content_digest: install.content_digest,
      content_path: `/api/v1/mods/${install.id}`,
      actor: "svc:web",
    });
  });

  it("gives the same content the same digest however its members are ordered", async () => {
    const pack = contentPack();
    const reordered = {
      assets: pack.assets,
      entries: [{ data: { names: { en: "Sword" }, damage: 7 }, id: "sword", kind: "item" }],
    };
    const first = await installed(t, token);
    const second = (await as("POST", "/mods", { manifest: manifest(), content_pack: reordered })).body.install;
    const read = (await anonymous("GET", `/mods/${first.id}`)).body.install;
    expect(second.content_digest).toBe(read.content_digest);
    expect(second.content_size).toBe(read.content_size);
  });

  it("refuses an invalid manifest: 400 games.manifest_invalid naming the JSON pointer, nothing stored", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [manifest({ version: "one" }), "/version"],
      [manifest({ version: "v1.0.0" }), "/version"],
      [manifest({ compatibility: "not a range" }), "/compatibility"],
      [manifest({ game_version: "^1.0.0" }), "/game_version"],
      [{ ...manifest(), name: undefined }, "/name"],
      [manifest({ capabilities: ["World Read"] }), "/capabilities/0"],
      [manifest({ capabilities: ["world.read", "world.read"] }), "/capabilities"],
      [manifest({ trust_tier: "official" }), "/trust_tier"],
      [manifest({ content: { digest: "md5:abc" } }), "/content/digest"],
    ];
    for (const [sent, pointer] of cases) {
      const answer = await as("POST", "/mods", { manifest: sent, content_pack: contentPack() });
      expect(answer.status, pointer).toBe(400);
      expect(answer.body, pointer).toMatchObject({ code: "games.manifest_invalid", field: "manifest", pointer });
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body.detail).toContain(pointer);
    }
    const list = await anonymous("GET", "/mods?game=arena&limit=200");
    expect(JSON.stringify(list.body)).not.toContain("World Read");
  });

  it("refuses an invalid content pack naming the pointer, a repeated entry, and an asset path that climbs", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ entries: "none" }, "/entries"],
      [{ assets: [] }, "/entries"],
      [
        contentPack({
          entries: [
            { kind: "item", id: "a" },
            { kind: "item", id: "a" },
          ],
        }),
        "/entries/1/id",
      ],
      [
        contentPack({
          assets: [{ path: "../etc/passwd", media_key: "AbCdEfGhIjKlMnOpQrStUv", sha256: "a".repeat(64) }],
        }),
        "/assets/0/path",
      ],
      [contentPack({ blob: "AAAA" }), "/blob"],
    ];
    for (const [pack, pointer] of cases) {
      const answer = await as("POST", "/mods", { manifest: manifest(), content_pack: pack });
      expect(answer.body, pointer).toMatchObject({
        status: 400,
        code: "games.content_invalid",
        field: "content_pack",
        pointer,
      });
    }
  });

  it("checks a pinned content digest, a missing manifest or pack, a bad server and an unknown field", async () => {
    const pinned = await as("POST", "/mods", {
      manifest: manifest({ content: { digest: `sha256:${"0".repeat(64)}` } }),
      content_pack: contentPack(),
    });
    expect(pinned.body).toMatchObject({
      status: 400,
      code: "games.content_digest_mismatch",
      pointer: "/content/digest",
    });
    const good = (await as("POST", "/mods", { manifest: manifest(), content_pack: contentPack() })).body.install;
    const matching = await as("POST", "/mods", {
      manifest: manifest({ content: { digest: good.content_digest } }),
      content_pack: contentPack(),
    });
    expect(matching.status).toBe(201);
    expect((await as("POST", "/mods", { content_pack: contentPack() })).body).toMatchObject({
      status: 400,
      field: "manifest",
    });
    expect((await as("POST", "/mods", { manifest: manifest() })).body).toMatchObject({
      status: 400,
      field: "content_pack",
    });
    const server = await as("POST", "/mods", { manifest: manifest(), content_pack: contentPack(), server: "EU 1" });
    expect(server.body).toMatchObject({ status: 400, code: "request.invalid", field: "server" });
    const stray = await as("POST", "/mods", {
      manifest: manifest(),
      content_pack: contentPack(),
      capability: "world.read",
    });
    expect(stray.body).toMatchObject({ status: 400, code: "request.invalid" });
  });

  it("refuses a content pack over the cap (413) and a second live install of one mod in one scope (409)", async () => {
    const big = contentPack({ entries: [{ kind: "text", id: "big", data: { text: "x".repeat(300 * 1024) } }] });
    const tooBig = await as("POST", "/mods", { manifest: manifest(), content_pack: big });
    expect(tooBig.body).toMatchObject({ status: 413, code: "games.content_too_large", field: "content_pack" });
    const sent = manifest();
    const first = (await as("POST", "/mods", { manifest: sent, content_pack: contentPack() })).body.install;
    const again = await as("POST", "/mods", { manifest: { ...sent, version: "1.1.0" }, content_pack: contentPack() });
    expect(again.body).toMatchObject({ status: 409, code: "games.mod_installed", install_id: first.id });
    const elsewhere = await as("POST", "/mods", { manifest: sent, content_pack: contentPack(), server: "us-1" });
    expect(elsewhere.status).toBe(201);
  });

  it("answers a retry with the same idempotency key with the first install", async () => {
    const body = { manifest: manifest(), content_pack: contentPack(), idempotency_key: "install-1" };
    const first = await as("POST", "/mods", body);
    const retry = await as("POST", "/mods", body);
    expect(retry.body.install.id).toBe(first.body.install.id);
    expect(await eventsOf(first.body.install.id)).toHaveLength(1);
  });
});

describe("public reads (GET /mods, GET /mods/{id})", () => {
  it("need no token: one install with its content pack, and pages filtered by game, server and status", async () => {
    const game = `g${Date.now().toString(36)}`;
    const a = await installed(t, token, { game });
    const b = await installed(t, token, { game });
    await as("POST", `/mods/${b.id}/enable`, {});
    const one = await anonymous("GET", `/mods/${a.id}`);
    expect(one.status).toBe(200);
    expect(one.body.install).toMatchObject({ id: a.id, game, content_pack: contentPack() });
    const page1 = await anonymous("GET", `/mods?game=${game}&limit=1`);
    expect(page1.body.mods.mods.map((m: { id: string }) => m.id)).toEqual([b.id]);
    expect(page1.body.mods.mods[0].content_pack).toBeUndefined();
    const page2 = await anonymous("GET", `/mods?game=${game}&limit=1&cursor=${page1.body.mods.next_cursor}`);
    expect(page2.body.mods).toMatchObject({ mods: [{ id: a.id }], next_cursor: "" });
    const enabled = await anonymous("GET", `/mods?game=${game}&status=MOD_STATUS_ENABLED`);
    expect(enabled.body.mods.mods.map((m: { id: string }) => m.id)).toEqual([b.id]);
  });

  it("answer 404 games.mod_not_found for a missing install, 400 for a malformed id, limit or cursor", async () => {
    expect((await anonymous("GET", "/mods/mod_nosuch1")).body).toMatchObject({
      status: 404,
      code: "games.mod_not_found",
    });
    expect((await anonymous("GET", "/mods/nope")).body).toMatchObject({ status: 400, field: "id" });
    expect((await anonymous("GET", "/mods?limit=0")).body).toMatchObject({ status: 400, field: "limit" });
    expect((await anonymous("GET", "/mods?cursor=zz")).body).toMatchObject({ status: 400, field: "cursor" });
  });
});
