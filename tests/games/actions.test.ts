import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { GamesService } from "../../gen/pf/games/v1/games_pb.js";
import { ModStatus } from "../../gen/pf/games/v1/mods_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { contentPack, gamesCall, installed, manifest, managerToken } from "./support.js";

const t = usePlatform({ services: ["games"] });
let token: string;
let as: ReturnType<typeof gamesCall>;
beforeAll(async () => {
  token = await managerToken(t);
  as = gamesCall(t, token);
});

const eventsOf = async (id: string) =>
  (await outboxEvents(t, "games", id)).map((row) => ({ subject: row.subject, ...JSON.parse(row.payload) }));

describe("enable, disable, grants, revoke", () => {
  it("each change answers the install, bumps its revision, and is audited and published once", async () => {
    const { id } = await installed(t, token);
    const granted = await as("POST", `/mods/${id}/grants`, { capability: "world.read" });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({
      install: { granted_capabilities: ["world.read"], status: "MOD_STATUS_DISABLED", revision: 2 },
      changed: true,
    });
    const enabled = await as("POST", `/mods/${id}/enable`, {});
    expect(enabled.body.install).toMatchObject({ status: "MOD_STATUS_ENABLED", revision: 3 });
    await as("POST", `/mods/${id}/grants`, { capability: "chat.send" });
    const ungranted = await as("DELETE", `/mods/${id}/grants/world.read`);
    expect(ungranted.body.install).toMatchObject({ granted_capabilities: ["chat.send"], revision: 5 });
    const disabled = await as("POST", `/mods/${id}/disable`, { reason: "crashes the lobby" });
    expect(disabled.body.install).toMatchObject({ status: "MOD_STATUS_DISABLED", status_reason: "crashes the lobby" });
    const revoked = await as("POST", `/mods/${id}/revoke`, { reason: "malware" });
    expect(revoked.body.install).toMatchObject({ status: "MOD_STATUS_REVOKED", revision: 7, status_reason: "malware" });

    const events = await eventsOf(id);
    expect(events.map((e) => e.subject)).toEqual([
      "games.mod.installed",
      "games.mod.granted",
      "games.mod.enabled",
      "games.mod.granted",
      "games.mod.ungranted",
      "games.mod.disabled",
      "games.mod.revoked",
    ]);
    expect(events.map((e) => e.revision)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // What a server acts on at its next tick: grants count only while enabled.
    expect(events.map((e) => e.active_capabilities)).toEqual([
      [],
      [],
      ["world.read"],
      ["chat.send", "world.read"],
      ["chat.send"],
      [],
      [],
    ]);
    expect(events[1]).toMatchObject({ capability: "world.read", granted_capabilities: ["world.read"] });
    expect(events[6]).toMatchObject({ status: "MOD_STATUS_REVOKED", reason: "malware", actor: "svc:web" });

    const audit = await as("GET", `/mods/${id}/audit`);
    expect(audit.status).toBe(200);
    expect(audit.body.audit.entries.map((e: { action: string }) => e.action)).toEqual([
      "revoked",
      "disabled",
      "ungranted",
      "granted",
      "enabled",
      "granted",
      "installed",
    ]);
    expect(audit.body.audit.entries[0]).toMatchObject({
      revision: 7,
      actor: "svc:web",
      admitted_by: "capability",
      reason: "malware",
      status: "MOD_STATUS_REVOKED",
    });
  });

  it("an action that changes nothing answers the install unchanged: no audit row, no event", async () => {
    const { id } = await installed(t, token);
    const disable = await as("POST", `/mods/${id}/disable`, {});
    expect(disable.body).toMatchObject({ install: { revision: 1 }, changed: false });
    await as("POST", `/mods/${id}/grants`, { capability: "world.read" });
    expect((await as("POST", `/mods/${id}/grants`, { capability: "world.read" })).body.changed).toBe(false);
    expect((await as("DELETE", `/mods/${id}/grants/chat.send`)).body.changed).toBe(false);
    expect((await eventsOf(id)).map((e) => e.subject)).toEqual(["games.mod.installed", "games.mod.granted"]);
    expect((await as("GET", `/mods/${id}/audit`)).body.audit.entries).toHaveLength(2);
  });

  it("refuses a capability the manifest did not request (422): granted stays within requested", async () => {
    const { id } = await installed(t, token);
    for (const [method, path, body] of [
      ["POST", `/mods/${id}/grants`, { capability: "admin.everything" }],
      ["DELETE", `/mods/${id}/grants/admin.everything`, undefined],
    ] as const) {
      const answer = await as(method, path, body);
      expect(answer.body).toMatchObject({
        status: 422,
        code: "games.capability_not_requested",
        capability: "admin.everything",
      });
    }
    expect((await as("POST", `/mods/${id}/grants`, { capability: "Not A Cap" })).body).toMatchObject({
      status: 400,
      field: "capability",
    });
    expect((await as("POST", `/mods/${id}/grants`, {})).body).toMatchObject({ status: 400, field: "capability" });
    expect((await eventsOf(id)).map((e) => e.subject)).toEqual(["games.mod.installed"]);
  });

  it("a revoked install takes nothing afterwards: 409 games.mod_revoked for every action, and its version is not installed again", async () => {
    const sent = manifest();
    const { id } = (await as("POST", "/mods", { manifest: sent, content_pack: contentPack() })).body.install;
    await as("POST", `/mods/${id}/revoke`, {});
    const actions: [string, string, unknown][] = [
      ["POST", `/mods/${id}/enable`, {}],
      ["POST", `/mods/${id}/disable`, {}],
      ["POST", `/mods/${id}/revoke`, {}],
      ["POST", `/mods/${id}/grants`, { capability: "world.read" }],
      ["DELETE", `/mods/${id}/grants/world.read`, undefined],
    ];
    for (const [method, path, body] of actions) {
      const answer = await as(method, path, body);
      expect(answer.body, path).toMatchObject({ status: 409, code: "games.mod_revoked" });
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
    }
    const again = await as("POST", "/mods", { manifest: sent, content_pack: contentPack() });
    expect(again.body).toMatchObject({ status: 409, code: "games.mod_revoked" });
    const newer = await as("POST", "/mods", { manifest: { ...sent, version: "1.0.1" }, content_pack: contentPack() });
    expect(newer.body.install).toMatchObject({ status: "MOD_STATUS_DISABLED", granted_capabilities: [] });
    expect((await eventsOf(id)).map((e) => e.subject)).toEqual(["games.mod.installed", "games.mod.revoked"]);
  });

  it("concurrent actions on one install apply one after another: revisions 2..n without gaps or repeats", async () => {
    const { id } = await installed(t, token);
    const caps = ["world.read", "chat.send", "inventory.write"];
    await Promise.all(caps.map((capability) => as("POST", `/mods/${id}/grants`, { capability })));
    const events = await eventsOf(id);
    expect(events.map((e) => e.revision)).toEqual([1, 2, 3, 4]);
    expect(events[3].granted_capabilities).toEqual([...caps].sort());
  });

  it("answer 404 for a missing install and 400 for a reason over 500 characters", async () => {
    for (const path of ["/mods/mod_nosuch1/enable", "/mods/mod_nosuch1/revoke"]) {
      expect((await as("POST", path, {})).body).toMatchObject({ status: 404, code: "games.mod_not_found" });
    }
    expect((await as("GET", "/mods/mod_nosuch1/audit")).body).toMatchObject({ status: 404 });
    const { id } = await installed(t, token);
    expect((await as("POST", `/mods/${id}/disable`, { reason: "x".repeat(501) })).body).toMatchObject({
      status: 400,
      field: "reason",
    });
    expect((await as("POST", `/mods/${id}/enable`, { reason: "why" })).body).toMatchObject({ status: 400 });
  });
});

describe("the audit log (GET /mods/{id}/audit)", () => {
  it("pages newest first by revision and names who acted for whom", async () => {
    const { id } = await installed(t, token);
    const forPerson = gamesCall(t, token, { "x-pf-subject": "usr_ops1" });
    await forPerson("POST", `/mods/${id}/enable`, {});
    await as("POST", `/mods/${id}/disable`, {});
    const first = (await as("GET", `/mods/${id}/audit?limit=2`)).body.audit;
    expect(first.entries.map((e: { revision: number }) => e.revision)).toEqual([3, 2]);
    expect(first.entries[1]).toMatchObject({ action: "enabled", actor: "svc:web", acting_for: "usr_ops1" });
    const rest = (await as("GET", `/mods/${id}/audit?limit=2&cursor=${first.next_cursor}`)).body.audit;
    expect(rest).toMatchObject({ entries: [{ revision: 1, action: "installed" }], next_cursor: "" });
    expect(
      (await as("GET", `/mods/${id}/audit?cursor=${Buffer.from('["x"]').toString("base64url")}`)).body,
    ).toMatchObject({
      status: 400,
      field: "cursor",
    });
  });

  it("is manage-only: no token is 401, a reader's token 403", async () => {
    const { id } = await installed(t, token);
    expect((await gamesCall(t)("GET", `/mods/${id}/audit`)).status).toBe(401);
    const reader = await t.token({ kind: "service", svc: "game", caps: ["games.mod.read"] });
    expect((await gamesCall(t, reader)("GET", `/mods/${id}/audit`)).body).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
    });
  });
});

describe("over RPC (the typed client a service uses)", () => {
  it("installs, grants and revokes; a revoked install's refusal is ABORTED carrying 409 games.mod_revoked", async () => {
    const games = t.client(GamesService, token);
    const { result } = await games.installMod({ manifest: manifest(), contentPack: contentPack(), server: "rpc-1" });
    const install = result.case === "install" ? result.value : undefined;
    expect(install).toMatchObject({ status: ModStatus.DISABLED, server: "rpc-1", revision: 1 });
    await games.grantCapability({ id: install!.id, capability: "world.read" });
    await games.revokeMod({ id: install!.id, reason: "rpc" });
    const refused = await games.enableMod({ id: install!.id }).catch((error: unknown) => ConnectError.from(error));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.Aborted);
    expect(problemOf(refused)).toMatchObject({ status: 409, code: "games.mod_revoked" });
  });
});
