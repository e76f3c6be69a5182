import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { contentPack, gamesCall, installed, manifest, managerToken, seedStaff } from "./support.js";

// Network in a process of its own, reached over gRPC through a proxy the test cuts: network really stops answering.
let network: TestPlatform;
let proxy: TcpProxy;
let t: TestPlatform;
const person = (sub: string) => t.token({ kind: "user", sub });

beforeAll(async () => {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { NATS_URL: "", PF_JWT_PRIVATE_KEY: key };
  network = await startTestPlatform({ services: ["network"], env: shared });
  const rpc = new URL(network.platform.rpcUrl);
  proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
  await proxy.open();
  t = await startTestPlatform({
    services: ["games"],
    env: { ...shared, PF_NETWORK_URL: `http://127.0.0.1:${proxy.port}`, PF_GAMES_NETWORK_TIMEOUT_MS: "1000" },
  });
  await seedStaff(network, {
    usr_owner1: StaffRole.OWNER,
    usr_admin1: StaffRole.ADMIN,
    usr_mod1: StaffRole.GLOBAL_MODERATOR,
  });
});
afterAll(async () => {
  await t?.stop();
  await proxy?.cut();
  await network?.stop();
});

describe("a person whom network's staff list names owner or admin", () => {
  it("manages mods with their own token; the audit names them, their role and how they were admitted", async () => {
    const owner = gamesCall(t, await person("usr_owner1"));
    const admin = gamesCall(t, await person("usr_admin1"));
    const answer = await owner("POST", "/mods", { manifest: manifest(), content_pack: contentPack() });
    expect(answer.status).toBe(201);
    const { id } = answer.body.install;
    expect((await admin("POST", `/mods/${id}/grants`, { capability: "world.read" })).status).toBe(200);
    expect((await admin("POST", `/mods/${id}/enable`, {})).body.install.status).toBe("MOD_STATUS_ENABLED");
    const audit = (await owner("GET", `/mods/${id}/audit`)).body.audit.entries;
    expect(
      audit.map((e: { actor: string; staff_role: string; admitted_by: string }) => [
        e.actor,
        e.staff_role,
        e.admitted_by,
      ]),
    ).toEqual([
      ["usr_admin1", "admin", "network_staff"],
      ["usr_admin1", "admin", "network_staff"],
      ["usr_owner1", "owner", "network_staff"],
    ]);
  });

  it("refuses anyone else's own token with 403 auth.staff_required: a global moderator, a member, a guest", async () => {
    const { id } = await installed(t, await managerToken(t));
    for (const sub of ["usr_mod1", "usr_nobody1", "gst_guest1"]) {
      const as = gamesCall(t, await person(sub));
      for (const [method, path, body] of [
        ["POST", "/mods", { manifest: manifest(), content_pack: contentPack() }],
        ["POST", `/mods/${id}/enable`, {}],
        ["GET", `/mods/${id}/audit`, undefined],
      ] as const) {
        const answer = await as(method, path, body);
        expect(answer.body, `${sub} ${path}`).toMatchObject({
          status: 403,
          code: "auth.staff_required",
          relation: "games.network_staff",
          roles: ["owner", "admin"],
        });
      }
    }
    // A role claimed by header is never taken from a person (403 auth.header_refused), whatever it says.
    const claimed = gamesCall(t, await person("usr_nobody1"), { "x-pf-staff": "1" });
    expect((await claimed("POST", `/mods/${id}/enable`, {})).body).toMatchObject({ code: "auth.header_refused" });
    expect((await gamesCall(t)("GET", `/mods/${id}`)).body.install.revision).toBe(1);
  });

  it("trust tiers grant nothing: a manager's token with every capability still installs unreviewed with no grant", async () => {
    const admin = gamesCall(t, await person("usr_admin1"));
    const answer = await admin("POST", "/mods", { manifest: manifest(), content_pack: contentPack() });
    expect(answer.body.install).toMatchObject({ trust_tier: "TRUST_TIER_UNREVIEWED", granted_capabilities: [] });
  });

  it("network not answering is 503 relation.unavailable (neither staff nor not staff), and nothing is changed", async () => {
    const { id } = await installed(t, await managerToken(t));
    const admin = gamesCall(t, await person("usr_admin1"));
    await proxy.cut();
    try {
      // The kit's one outage policy for a declared relation (services/kit/README.md), no longer network.unavailable.
      const answer = await admin("POST", `/mods/${id}/enable`, {});
      expect(answer.body).toMatchObject({ status: 503, code: "relation.unavailable", relation: "games.network_staff" });
      const stranger = gamesCall(t, await person("usr_nobody1"));
      expect((await stranger("POST", `/mods/${id}/enable`, {})).body).toMatchObject({
        status: 503,
        code: "relation.unavailable",
      });
      // Callers admitted by capability do not need network.
      expect((await gamesCall(t, await managerToken(t))("GET", `/mods/${id}/audit`)).status).toBe(200);
    } finally {
      await proxy.open();
    }
    expect((await gamesCall(t)("GET", `/mods/${id}`)).body.install.status).toBe("MOD_STATUS_DISABLED");
    expect((await admin("POST", `/mods/${id}/enable`, {})).body.install.status).toBe("MOD_STATUS_ENABLED");
  });
});
