import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { operator, someone } from "./runs-support.js";
import { startOpenAiServer, type OpenAiServer } from "./support/openai-server.js";

let loopback: OpenAiServer;
const t = usePlatform({ services: ["ai"], env: { PF_AI_PROVIDER_HOSTS: "127.0.0.1", PF_AI_TEST_KEY: "sk-test" } });
beforeAll(async () => {
  loopback = await startOpenAiServer();
});
afterAll(() => loopback.close());

describe("run control", () => {
  it("cancels a run stalled at its provider (the call is aborted), and retries it once", async () => {
    const ops = await operator(t);
    await ops.provider("stuck", loopback.url, { timeout_ms: 60_000, max_retries: 0 });
    loopback.script(() => ({ kind: "stall" }));
    const seen = loopback.received.length;
    const token = await someone(t);
    const started = await t.http("POST", "/ai/api/v1/generate", {
      token,
      body: { text: "Never mind.", model: "stuck/m1", wait_ms: 100, no_cache: true },
    });
    expect(started.status).toBe(202);
    const id = started.body.run.id;
    await until(() => loopback.received.length > seen);
    const call = loopback.received[seen]!;

    const other = await t.http("POST", `/ai/api/v1/runs/${id}/cancel`, { token: await someone(t), body: {} });
    expect(other.status).toBe(404);
    const canceled = await t.http("POST", `/ai/api/v1/runs/${id}/cancel`, { token, body: {} });
    expect(canceled.status).toBe(200);
    expect(canceled.body.run).toMatchObject({ id, state: "canceled" });
    // The provider call was aborted: the run's caller closed its connection before an answer.
    await until(() => loopback.abandoned.includes(call));
    // Canceling again answers it as it is.
    const again = await t.http("POST", `/ai/api/v1/runs/${id}/cancel`, { token, body: {} });
    expect(again.body.run.state).toBe("canceled");

    loopback.script(() => ({ kind: "answer", content: "Second time lucky." }));
    const retried = await t.http("POST", `/ai/api/v1/runs/${id}/retry`, { token, body: {} });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    expect(retried.body.run).toMatchObject({ state: "succeeded", retry_of: id, operation: "generate" });
    expect(retried.body.run.id).not.toBe(id);
    const twice = await t.http("POST", `/ai/api/v1/runs/${id}/retry`, { token, body: {} });
    expect(twice.body.run.id).toBe(retried.body.run.id);
    const original = await t.http("GET", `/ai/api/v1/runs/${id}`, { token });
    expect(original.body.run.retried_by).toBe(retried.body.run.id);

    const notRetryable = await t.http("POST", `/ai/api/v1/runs/${retried.body.run.id}/retry`, { token, body: {} });
    expect(notRetryable.status).toBe(409);
    expect(notRetryable.body.code).toBe("ai.run_not_retryable");
  });

  it("gives two concurrent retries the same new run", async () => {
    const token = await someone(t);
    loopback.script(() => ({ kind: "status", status: 400 }));
    const failed = await t.http("POST", "/ai/api/v1/generate", {
      token,
      body: { text: "Refused.", model: "stuck/m1", no_cache: true },
    });
    expect(failed.body.run.state).toBe("failed");
    loopback.script(undefined);
    const retries = await Promise.all(
      [0, 1, 2].map(() => t.http("POST", `/ai/api/v1/runs/${failed.body.run.id}/retry`, { token, body: {} })),
    );
    expect(new Set(retries.map((each) => each.body.run.id)).size).toBe(1);
  });
});
