import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { ToolsService } from "../../gen/pf/tools/v1/tools_pb.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { BOUNDARY, multipart } from "../media/support.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";

/**
 * What bounds a run: the caller's quota (3 light units an hour here; the clock stands still, so no window ends
 * between the runs), anonymous callers counted by address (an IPv6 address by its /64), and the longest wait a job
 * tool's run may ask for (none here: PF_TOOLS_MAX_WAIT_MS 0).
 */
const t = usePlatform({
  services: ["tools", "media"],
  env: { PF_TOOLS_QUOTA_LIGHT: "3", PF_TOOLS_QUOTA_PROBE: "2", PF_TOOLS_MAX_WAIT_MS: "0" },
  clock: new ManualClock(new Date()),
});

const hash = (token?: string) =>
  t.http("POST", "/tools/api/v1/tools/text.hash/run", { token, body: { input: { text: "abc" } } });
const statuses = (answers: { status: number }[]) => answers.map((answer) => answer.status).sort();

describe("the quota of a caller", () => {
  it("lets exactly its budget through of concurrent runs: the one past it is 429 with retry_after_seconds", async () => {
    const token = await t.token({ kind: "user", sub: "usr_quota1" });
    const answers = await Promise.all(Array.from({ length: 4 }, () => hash(token)));
    expect(statuses(answers)).toEqual([200, 200, 200, 429]);
    const over = answers.find((answer) => answer.status === 429)!;
    expect(over.body).toMatchObject({ code: "tools.quota_exceeded", quota_class: "light", limit: 3 });
    const seconds = over.body.retry_after_seconds as number;
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(3600);
    expect(over.headers.get("retry-after")).toBe(String(seconds));
    // The refusal took nothing either: still refused, not counted past the budget; another caller has its own.
    expect((await hash(token)).status).toBe(429);
    expect((await hash(await t.token({ kind: "user", sub: "usr_quota2" }))).status).toBe(200);
  });

  it("takes nothing for a run refused before it ran, and the cost of one that ran and failed", async () => {
    const token = await t.token({ kind: "user", sub: "usr_quota3" });
    const run = (input: unknown) => t.http("POST", "/tools/api/v1/tools/text.base64/run", { token, body: { input } });
    for (let i = 0; i < 4; i++) expect((await run({ text: "x", direction: "sideways" })).status).toBe(400);
    const failed = await run({ text: "not base64!", direction: "decode" });
    expect([failed.status, failed.body.state]).toEqual([200, "failed"]);
    expect((await run({ text: "a", direction: "encode" })).status).toBe(200);
    expect((await run({ text: "b", direction: "encode" })).status).toBe(200);
    expect((await run({ text: "c", direction: "encode" })).status).toBe(429);
  });

  it("gives back what a run the tool itself refused had held: a probe aimed inside takes nothing", async () => {
    const token = await t.token({ kind: "app", app_id: "prober", caps: ["tools.net.probe"] });
    for (let i = 0; i < 3; i++) {
      const run = await t.http("POST", "/tools/api/v1/tools/net.port/run", {
        token,
        body: { input: { host: "127.0.0.1", port: 9 } },
      });
      expect(run.status, JSON.stringify(run.body)).toBe(400);
      expect(run.body.code).toBe("tools.target_refused");
    }
  });

  it("counts anonymous callers by address: IPv6 addresses of one /64 share one quota, another /64 has its own", async () => {
    const tools = createClient(ToolsService, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    const keys = t.platform.contexts.get("tools")!.clientKeys;
    // As a gateway of another process calls: the client's address with its proof.
    const from = async (ip: string) => {
      const requests = (async function* () {
        yield { id: "text.hash", input: { text: ip } };
      })();
      const headers = { "pf-client-ip": ip, "pf-client-ip-proof": keys.proofOf(ip) };
      return tools.runTool(requests, { headers }).then(
        (run) => run.state,
        (error: unknown) => ConnectError.from(error).code,
      );
    };
    expect(await from("2001:db8:7:1::1")).toBe("succeeded");
    expect(await from("2001:db8:7:1::1")).toBe("succeeded");
    expect(await from("2001:db8:7:1:abcd:ef01:2345:6789")).toBe("succeeded");
    expect(await from("2001:db8:7:1::ffff")).toBe(Code.ResourceExhausted);
    expect(await from("2001:db8:7:2::1")).toBe("succeeded");
    for (let i = 0; i < 3; i++) expect(await from("192.0.2.10")).toBe("succeeded");
    expect(await from("192.0.2.10")).toBe(Code.ResourceExhausted);
    expect(await from("192.0.2.11")).toBe("succeeded");
  });
});

describe("the wait of a job tool's run", () => {
  it("is cut to PF_TOOLS_MAX_WAIT_MS: asked for ten minutes, the run answers 202 with the job at once", async () => {
    const token = await t.token({ kind: "user", sub: "usr_wait1" });
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000000" } })
      .png()
      .toBuffer();
    const response = await fetch(`${t.gatewayUrl}/tools/api/v1/tools/img.process/run`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}`, authorization: `Bearer ${token}` },
      body: multipart([
        { name: "input", data: "{}" },
        { name: "wait_ms", data: "600000" },
        { name: "file", filename: "black.png", type: "image/png", data: png },
      ]),
    });
    expect(response.status).toBe(202);
    const body = (await response.json()) as { state: string; job: { id: string } };
    expect(body.state).toBe("queued");
    const location = `/tools/api/v1/jobs/${body.job.id}`;
    expect(response.headers.get("location")).toBe(location);
    // The job goes on after the answer, read where Location says.
    await until(async () => (await t.http("GET", location, { token })).body.job.state === "succeeded");
  });
});
