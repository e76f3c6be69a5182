import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { BOUNDARY, multipart } from "../media/support.js";
import { usePlatform } from "../support/platform.js";

/**
 * The run route through the gateway: who may run what (the tiers: the refusal matrix itself is tests/tools/access),
 * a job tool's run answering its job (202 with Location while it runs, 200 once ended, owned by the caller), and a
 * tool whose family does not run here (FFmpeg named where there is none).
 */
const t = usePlatform({
  services: ["tools", "media"],
  env: { PF_TOOLS_FFMPEG: "/nonexistent/ffmpeg", PF_TOOLS_MAX_WAIT_MS: "5000" },
});

// Answers are read field by field.
type Json = any;

const hash = (token?: string, headers: Record<string, string> = {}) =>
  t.http("POST", "/tools/api/v1/tools/text.hash/run", { token, headers, body: { input: { text: "abc" } } });

let png: Buffer;
beforeAll(async () => {
  png = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3366cc" } })
    .png()
    .toBuffer();
});

/** img.process on the PNG as a form: the input and wait_ms as fields, the file as its part. */
async function processImage(token: string | undefined, waitMs: number, headers: Record<string, string> = {}) {
  const body = multipart([
    { name: "input", data: JSON.stringify({ resize: { width: 32 }, format: "webp" }) },
    { name: "wait_ms", data: String(waitMs) },
    { name: "file", filename: "blue.png", type: "image/png", data: png },
  ]);
  const response = await fetch(`${t.gatewayUrl}/tools/api/v1/tools/img.process/run`, {
    method: "POST",
    headers: {
      "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
      ...(token && { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}

describe("who may run a tool", () => {
  it("anyone an anonymous tool; nobody anonymous a signed-in one (401 auth.required)", async () => {
    expect((await hash()).status).toBe(200);
    const anonymous = await processImage(undefined, 0);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe("auth.required");
  });

  it("a person or guest without any capability; an app only with tools.tool.run (else 403)", async () => {
    const user = await t.token({ kind: "user", sub: "usr_tiers1", caps: [] });
    const guest = await t.token({ kind: "user", sub: "gst_tiers1", caps: [] });
    expect((await hash(user)).status).toBe(200);
    expect((await processImage(guest, 0)).status).toBe(202);
    const bare = await t.token({ kind: "app", app_id: "tiers", caps: ["tools.tool.read"] });
    const refused = await hash(bare);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("auth.capability_missing");
    const app = await t.token({ kind: "app", app_id: "tiers", caps: ["tools.tool.run"] });
    expect((await hash(app)).status).toBe(200);
    expect((await processImage(app, 0)).status).toBe(202);
  });
});

describe("a job tool's run", () => {
  it("answers 202 with its queued job and Location at once (wait_ms 0): a job its owner reads there, nobody else", async () => {
    const owner = await t.token({ kind: "user", sub: "usr_runjob1" });
    const run = await processImage(owner, 0);
    expect(run.status).toBe(202);
    expect(run.body).toMatchObject({
      tool: "img.process",
      cost: 1,
      job: { tool: "img.process", owner: "usr_runjob1" },
    });
    expect(run.body.job.id).toMatch(/^job_[0-9a-z]{24}$/);
    expect(["queued", "running"]).toContain(run.body.state);
    expect(run.body.state).toBe(run.body.job.state);
    const location = run.headers.get("location");
    expect(location).toBe(`/tools/api/v1/jobs/${run.body.job.id}`);
    const read = await t.http("GET", location!, { token: owner });
    expect(read.status).toBe(200);
    expect(read.body.job.id).toBe(run.body.job.id);
    const other = await t.token({ kind: "user", sub: "usr_runjob2" });
    expect((await t.http("GET", location!, { token: other })).status).toBe(404);
  });

  it("answers 200 with the ended job when it ends within wait_ms", async () => {
    const owner = await t.token({ kind: "user", sub: "usr_runjob3" });
    const run = await processImage(owner, 5000);
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.headers.get("location")).toBeNull();
    expect(run.body).toMatchObject({
      state: "succeeded",
      job: { state: "succeeded", output: { width: 32, format: "webp" } },
    });
    expect(run.body.job.files).toHaveLength(1);
  });

  it("is owned by the person a service runs it for (X-PF-Subject)", async () => {
    const web = await t.token({ kind: "service", svc: "web", caps: ["tools.tool.run", "tools.job.read"] });
    const run = await processImage(web, 0, { "x-pf-subject": "usr_runjob4" });
    expect(run.status).toBe(202);
    expect(run.body.job.owner).toBe("usr_runjob4");
    const person = await t.token({ kind: "user", sub: "usr_runjob4" });
    expect((await t.http("GET", run.headers.get("location")!, { token: person })).status).toBe(200);
  });

  it("is refused before anything is stored when its input is bad (400 tools.input.invalid)", async () => {
    const owner = await t.token({ kind: "user", sub: "usr_runjob6" });
    const run = await t.http("POST", "/tools/api/v1/tools/img.process/run", {
      token: owner,
      body: { input: { format: "bmp" } },
    });
    expect(run.status).toBe(400);
    expect(run.body).toMatchObject({ code: "tools.input.invalid", pointer: "/format" });
  });
});

describe("a tool whose family does not run here", () => {
  it("is refused with 503 tools.tool.unavailable and the reason", async () => {
    const owner = await t.token({ kind: "user", sub: "usr_noaudio" });
    const run = await t.http("POST", "/tools/api/v1/tools/audio.process/run", { token: owner, body: { input: {} } });
    expect(run.status).toBe(503);
    expect(run.body).toMatchObject({ code: "tools.tool.unavailable", tool: "audio.process" });
    expect(run.body.detail).toMatch(/FFmpeg/);
  });
});
