import { createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { netCatalogue } from "../../services/tools/catalogue/net.js";
import { usePlatform } from "../support/platform.js";

// The probes through the run route and the gateway: only app and service principals holding tools.net.probe,
// against a loopback listener this file lists in PF_FETCH_ALLOW_HOSTS (the kit's test switch). The clock stands
// still in the middle of a minute, so the throttle's window does not end during a test.
const clock = new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000));
const env: Record<string, string> = {};
let listener: Server;
let port: number;

beforeAll(async () => {
  listener = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as AddressInfo).port;
  env.PF_FETCH_ALLOW_HOSTS = `127.0.0.1:${port}`;
});

const t = usePlatform({ services: ["tools", "media"], clock, env });

afterAll(() => listener?.close());

const probe = (tool: string, input: object, token?: string, headers: Record<string, string> = {}) =>
  t.http("POST", `/tools/api/v1/tools/${tool}/run`, { token, headers, body: { input } });

let partner: string;
beforeAll(async () => {
  partner = await t.token({ kind: "app", app_id: "partner", caps: ["tools.net.probe"] });
});

describe("POST /tools/api/v1/tools/{net.*}/run", () => {
  it("runs a probe for an app holding tools.net.probe", async () => {
    const answer = await probe("net.port", { host: "127.0.0.1", port }, partner);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      tool: "net.port",
      state: "succeeded",
      output: { host: "127.0.0.1", port, address: "127.0.0.1", state: "open" },
      cost: 1,
    });
  });

  it("refuses a person and an app without the capability (403), and a service acting for a person", async () => {
    const input = { host: "127.0.0.1", port };
    const user = await t.token({ kind: "user", sub: "usr_prober", caps: ["tools.net.probe"] });
    const app = await t.token({ kind: "app", app_id: "plain", caps: ["tools.tool.run"] });
    for (const [who, answer] of [
      ["a person", await probe("net.port", input, user)],
      ["an app without tools.net.probe", await probe("net.port", input, app)],
    ] as const) {
      expect(answer.status, `${who}: ${JSON.stringify(answer.body)}`).toBe(403);
      expect(answer.body.code, who).toBe("tools.probe_refused");
    }
    expect((await probe("net.port", input)).status).toBe(401);
    // A service holding it may probe as itself, never for a person (the kit refuses the subject it names).
    const service = await t.token({ kind: "service", svc: "web", caps: ["tools.net.probe"] });
    expect((await probe("net.port", input, service)).body.state).toBe("succeeded");
    const acting = await probe("net.port", input, service, { "x-pf-subject": "usr_prober" });
    expect(acting.status).toBe(400);
    expect(acting.body.code).toBe("auth.acting_subject_refused");
  });

  it("answers a target inside with 400 tools.target_refused", async () => {
    for (const host of ["127.0.0.1", "169.254.169.254", "[::1]", "localhost"]) {
      const answer = await probe("net.port", { host, port: 1 }, partner);
      expect(answer.status, host).toBe(400);
      expect(answer.body.code, host).toBe("tools.target_refused");
    }
  });

  it("answers a probe that found nothing as a failed run", async () => {
    const answer = await probe("net.tls", { host: "127.0.0.1", port }, partner);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ state: "failed", failure: { code: "tools.probe.failed" } });
  });

  it("throttles a target across callers: 429 tools.target_throttled with retry_after_seconds", async () => {
    clock.advance(60_000);
    const other = await t.token({ kind: "service", svc: "monitor", caps: ["tools.net.probe"] });
    const limit = netCatalogue.find((tool) => tool.id === "net.latency")!.limits.perTargetPerMinute!;
    for (let n = 0; n < limit; n++) {
      const answer = await probe("net.latency", { host: "127.0.0.1", port, count: 1 }, n % 2 ? partner : other);
      expect(answer.body.state, `run ${n + 1}`).toBe("succeeded");
    }
    const throttled = await probe("net.latency", { host: "127.0.0.1", port, count: 1 }, partner);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ code: "tools.target_throttled", retry_after_seconds: 30 });
  });
});
