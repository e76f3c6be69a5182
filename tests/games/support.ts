import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import type { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import type { TestPlatform } from "../support/platform.js";

/** The capabilities of the first-party service that manages mods (the web app's backend). */
export const MANAGE = ["games.mod.manage", "games.mod.read"];

let n = 0;
/** A fresh word, unique within a run. */
export const fresh = (tag: string) => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** A valid mods/mod-manifest.v1 with a fresh mod id. */
export function manifest(extra: Record<string, unknown> = {}) {
  return {
    id: `com.example.${fresh("m")}`,
    name: "Better Swords",
    version: "1.0.0",
    game: "arena",
    compatibility: "^1.0.0",
    capabilities: ["world.read", "chat.send", "inventory.write"],
    ...extra,
  };
}

/** A valid games-content@1: one entry and one asset pinned by digest. */
export function contentPack(extra: Record<string, unknown> = {}) {
  return {
    entries: [{ kind: "item", id: "sword", data: { damage: 7, names: { en: "Sword" } } }],
    assets: [
      {
        path: "sprites/sword.png",
        media_key: "AbCdEfGhIjKlMnOpQrStUv",
        sha256: "a".repeat(64),
        size: 10,
        type: "image/png",
      },
    ],
    ...extra,
  };
}

/** A token of the managing service. */
export const managerToken = (t: TestPlatform) => t.token({ kind: "service", svc: "web", caps: MANAGE });

/** Calls a games route through the gateway. */
export function gamesCall(t: TestPlatform, token?: string, headers: Record<string, string> = {}) {
  return (method: string, path: string, body?: unknown) =>
    t.http(method, `/games/api/v1${path}`, { token, body, headers });
}

/** Installs a fresh mod as the managing service and answers the install. */
export async function installed(t: TestPlatform, token: string, extra: Record<string, unknown> = {}) {
  const answer = await gamesCall(t, token)("POST", "/mods", { manifest: manifest(extra), content_pack: contentPack() });
  if (answer.status !== 201) throw new Error(`install failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.install as { id: string; mod_id: string; revision: number };
}

/** Sets people's network staff roles through network's admin RPC (network must run in `t`). */
export async function seedStaff(t: TestPlatform, roles: Record<string, StaffRole>) {
  const admin = t.client(
    NetworkAdminService,
    await t.token({ kind: "service", svc: "network", caps: ["network.admin"] }),
  );
  for (const [subject, role] of Object.entries(roles)) await admin.setStaff({ subject, role });
}
