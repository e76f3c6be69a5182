import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { operator, someone } from "./runs-support.js";
import { startOpenAiServer, type OpenAiServer } from "./support/openai-server.js";

let loopback: OpenAiServer;
const t = usePlatform({
  services: ["ai"],
  env: {
    PF_AI_PROVIDER_HOSTS: "127.0.0.1",
    PF_AI_TEST_KEY: "sk-test",
    PF_AI_RETRY_BASE_MS: "50",
    PF_AI_RETRY_MAX_MS: "2000",
  },
});
beforeAll(async () => {
  loopback = await startOpenAiServer();
});
afterAll(() => loopback.close());

const generate = async (body: Record<string, unknown>) =>
  t.http("POST", "/ai/api/v1/generate", {
    token: await someone(t),
    body: { text: "Say hello.", no_cache: true, ...body },
  });

describe("an OpenAI-compatible provider", () => {
  it("retries a 429 after its Retry-After, then succeeds: two calls logged and counted", async () => {
    const ops = await operator(t);
    await ops.provider("limited", loopback.url, { max_retries: 2 });
    loopback.enqueue({ kind: "status", status: 429, headers: { "retry-after": "1" } });
    loopback.script(() => ({ kind: "answer", content: "Hello there." }));
    const seen = loopback.received.length;
    const started = Date.now();
    const answer = await generate({ model: "limited/m1" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.run).toMatchObject({
      state: "succeeded",
      provider: "limited",
      model: "m1",
      stub: false,
      attempts: 2,
    });
    expect(answer.body.run.output.text).toBe("Hello there.");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(loopback.received.length - seen).toBe(2);
    expect(loopback.received.at(-1)!.body?.model).toBe("m1");
    const logged = await ops.requestsOf(answer.body.run.id);
    expect(logged.map((each: { outcome: string }) => each.outcome).sort()).toEqual(["ok", "rate_limited"]);
  });

  it("falls back to the next target after a 500", async () => {
    const ops = await operator(t);
    await ops.provider("broken", loopback.url, { max_retries: 0 });
    await ops.provider("spare", loopback.url, { max_retries: 0 });
    await ops.route("fallback", ["broken/m1", "spare/m1"]);
    loopback.enqueue({ kind: "status", status: 500 });
    loopback.script(() => ({ kind: "answer", content: "From the spare." }));
    const answer = await generate({ route: "fallback" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.run).toMatchObject({ state: "succeeded", provider: "spare", attempts: 2 });
    const logged = await ops.requestsOf(answer.body.run.id);
    expect(
      logged.map((each: { provider: string; outcome: string }) => `${each.provider}:${each.outcome}`).sort(),
    ).toEqual(["broken:error", "spare:ok"]);
  });

  it("opens the breaker of a provider that keeps stalling, refuses without calling it, and closes after a trial", async () => {
    const ops = await operator(t);
    await ops.provider("stalling", loopback.url, {
      timeout_ms: 300,
      max_retries: 0,
      breaker_threshold: 2,
      breaker_open_ms: 1500,
    });
    loopback.script(() => ({ kind: "stall" }));
    for (let i = 0; i < 2; i++) {
      const answer = await generate({ model: "stalling/m1" });
      expect(answer.status).toBe(200);
      expect(answer.body.run).toMatchObject({ state: "failed", failure: { code: "ai.provider_timeout" } });
    }
    expect((await ops.breaker("stalling")).state).toBe("open");
    const seen = loopback.received.length;
    const refused = await generate({ model: "stalling/m1" });
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe("ai.provider_unavailable");
    expect(loopback.received.length).toBe(seen);

    loopback.script(() => ({ kind: "answer", content: "Back again." }));
    const opened = await ops.breaker("stalling");
    await until(() => Date.now() > Date.parse(opened.reopens_at), 5_000);
    const trial = await generate({ model: "stalling/m1" });
    expect(trial.status).toBe(200);
    expect(trial.body.run).toMatchObject({ state: "succeeded", provider: "stalling" });
    expect(loopback.received.length).toBe(seen + 1);
    expect((await ops.breaker("stalling")).state).toBe("closed");
  });

  it("answers 202 with Location while a run waits on its provider; the run is read once it ended", async () => {
    const ops = await operator(t);
    await ops.provider("slow", loopback.url, { timeout_ms: 1500, max_retries: 0 });
    loopback.script(() => ({ kind: "stall" }));
    const token = await someone(t);
    const answer = await t.http("POST", "/ai/api/v1/generate", {
      token,
      body: { text: "Take your time.", model: "slow/m1", wait_ms: 100, no_cache: true },
    });
    expect(answer.status).toBe(202);
    expect(answer.body.run.state).toBe("running");
    expect(answer.headers.get("location")).toBe(`/ai/api/v1/runs/${answer.body.run.id}`);
    let read: any;
    await until(async () => {
      read = await t.http("GET", `/ai/api/v1/runs/${answer.body.run.id}`, { token });
      return read.body.run.state !== "running";
    });
    expect(read.body.run).toMatchObject({ state: "failed", failure: { code: "ai.provider_timeout" }, attempts: 1 });
    loopback.script(undefined);
  });
});
