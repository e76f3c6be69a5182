import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { TokenVerifier } from "../../services/kit/auth/tokens.js";
import { bearer, clientWithDefaults, Transports } from "../../services/kit/rpc/clients.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { startTestPlatform, usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });

describe("typed clients between services", () => {
  it("go over gRPC (HTTP/2) to PF_<SERVICE>_URL when the service runs elsewhere", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: ["network.coins.credit"], app_id: "app_remote" });
    const transports = new Transports(t.platform.transport, new Set(), { network: t.platform.rpcUrl }, [
      bearer(async () => token),
    ]);
    const network = clientWithDefaults(NetworkService, transports.for("network"), { timeoutMs: 5_000 });
    const answer = await network.creditCoins({ subject: "usr_r1", amount: 3n, idempotencyKey: "r1" });
    expect(answer).toMatchObject({ subject: "usr_r1", appId: "app_remote", balance: 3n });
  });

  it("carry the calling service's own token, minted from the capabilities it holds", async () => {
    const ctx = t.platform.contexts.get("network")!;
    // The network module holds no capabilities of its own, so its calls are refused by capability, not by token.
    await expect(ctx.client(NetworkService).listStaff({})).rejects.toThrow(/capability network.staff.read/);
  });

  it("refuse an answer that comes after the call's deadline", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: ["identity.subject.resolve"] });
    const network = clientWithDefaults(NetworkService, t.platform.transport, {
      headers: { authorization: `Bearer ${token}` },
    });
    // 200 lookups in one database round trip take well over a millisecond.
    const queries = Array.from({ length: 200 }, (_, i) => ({ service: "tips", localId: `l${i}` }));
    await expect(network.resolveIdentityBatch({ queries }, { timeoutMs: 1 })).rejects.toThrow(/deadline/);
    await expect(network.resolveIdentityBatch({ queries })).resolves.toBeDefined();
  });
});

describe("the token command", () => {
  it("prints a token the platform accepts", async () => {
    const dataDir = t.platform.contexts.get("network")!.config.dataDir;
    const { stdout } = await promisify(execFile)(
      "npx",
      [
        "tsx",
        "services/kit/auth/token-cli.ts",
        "--kind",
        "service",
        "--svc",
        "tips",
        "--caps",
        "tips.goal.create,billing.transfer.create",
        "--app-id",
        "app9",
      ],
      { env: { ...process.env, PF_DATA_DIR: dataDir } },
    );
    const claims = await new TokenVerifier(t.platform.keys).verify(stdout.trim());
    expect(claims).toMatchObject({
      kind: "service",
      sub: "svc:tips",
      caps: ["tips.goal.create", "billing.transfer.create"],
      app_id: "app9",
    });
  });
});

describe("the host", () => {
  it("refuses to start with PF_SERVICES naming a service it does not have", async () => {
    await expect(startTestPlatform({ services: ["network", "nosuch"] })).rejects.toThrow(/nosuch/);
  });
});

describe("the injected clock", () => {
  it("is the time services write, so escrow, grace and TTL rules are testable without waiting", async () => {
    const clock = new ManualClock(new Date("2030-05-01T12:00:00Z"));
    const timed = await startTestPlatform({ services: ["network"], clock });
    try {
      const token = await timed.token({ kind: "service", svc: "space", caps: ["network.notifications.push"] });
      const push = () =>
        timed.http("POST", "/network/internal/notifications/mention", {
          token,
          body: { recipients: ["usr_k1"], title: "t" },
        });
      expect((await push()).body.notifications[0].created_at).toBe("2030-05-01T12:00:00Z");
      clock.advance(90_000);
      expect((await push()).body.notifications[0].created_at).toBe("2030-05-01T12:01:30Z");
    } finally {
      await timed.stop();
    }
  });
});
