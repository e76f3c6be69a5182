import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { EventStreamReader, type SentEvent } from "../support/sse.js";
import { operator, someone } from "./runs-support.js";
import { startOpenAiServer, type OpenAiServer } from "./support/openai-server.js";

let loopback: OpenAiServer;
const t = usePlatform({ services: ["ai"], env: { PF_AI_PROVIDER_HOSTS: "127.0.0.1", PF_AI_TEST_KEY: "sk-test" } });
beforeAll(async () => {
  loopback = await startOpenAiServer();
});
afterAll(() => loopback.close());

async function stream(token: string, body: unknown): Promise<{ status: number; events: SentEvent[]; problem?: any }> {
  const response = await fetch(`${t.gatewayUrl}/ai/api/v1/chat/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) return { status: response.status, events: [], problem: await response.json() };
  const reader = new EventStreamReader(response);
  const events: SentEvent[] = [];
  for (let event = await reader.next(15_000); event; event = await reader.next(15_000)) events.push(event);
  return { status: 200, events };
}

const conversation = { messages: [{ role: "user", content: "Tell me about chips." }] };

describe("streamed chat", () => {
  it("streams the local provider's answer: started, deltas, done", async () => {
    const { status, events } = await stream(await someone(t), conversation);
    expect(status).toBe(200);
    expect(events[0]!.event).toBe("started");
    expect(events.at(-1)!.event).toBe("done");
    const done = events.at(-1)!.data.done;
    expect(done).toMatchObject({ state: "succeeded", provider: "local", stub: true, operation: "chat" });
    const deltas = events.filter((each) => each.event === "delta").map((each) => each.data.delta);
    expect(deltas.join("")).toBe(done.output.text);
  });

  it("fails a cut stream with what was received, its usage settled", async () => {
    const ops = await operator(t);
    await ops.provider("cutting", loopback.url, { max_retries: 0 });
    loopback.enqueue({ kind: "stream", chunks: ["Chips ", "are ", "small"], end: "cut" });
    const { status, events } = await stream(await someone(t), { ...conversation, model: "cutting/m1" });
    expect(status).toBe(200);
    const deltas = events.filter((each) => each.event === "delta").map((each) => each.data.delta);
    expect(deltas.join("")).toBe("Chips are small");
    const done = events.at(-1)!;
    expect(done.event).toBe("done");
    expect(done.data.done).toMatchObject({
      state: "failed",
      failure: { code: "ai.stream_interrupted" },
      output: { text: "Chips are small" },
      attempts: 1,
    });
    expect(done.data.done.usage.input_tokens).toBeGreaterThan(0);
    const logged = await ops.requestsOf(done.data.done.id);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ outcome: "interrupted", error_code: "ai.stream_interrupted" });
  });

  it("holds a stream's namespace to the token's ns claim", async () => {
    const token = await t.token({ kind: "service", sub: "svc:trade", caps: ["ai.run.create"], ns: ["trade"] });
    const refused = await stream(token, { ...conversation, namespace: "news" });
    expect(refused.status).toBe(403);
    expect(refused.problem.code).toBe("ai.namespace_refused");
  });
});
