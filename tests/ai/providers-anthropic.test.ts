import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { adapterOf } from "../../services/ai/providers/index.js";
import { ProviderFailure, type ModelProvider, type ProviderCall } from "../../services/ai/providers/provider.js";
import { callOf, rejectionOf } from "./support/provider-call.js";

/** What the tiny Messages server does with a request. */
type Reply = (response: ServerResponse) => void;
interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const KEY = "sk-ant-test-secret";
const replies: Reply[] = [];
const seen: Seen[] = [];
let base = "";
let provider: ModelProvider;
const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on("data", (part: Buffer) => parts.push(part));
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
    seen.push({ path: request.url ?? "", headers: request.headers, body });
    (replies.shift() ?? message("ok"))(response);
  });
});

const message =
  (text: string, usage = { input_tokens: 12, output_tokens: 4 }): Reply =>
  (response) => {
    response.writeHead(200, { "content-type": "application/json" });
    const content = [{ type: "text", text }];
    response.end(JSON.stringify({ id: "msg_1", type: "message", role: "assistant", content, usage }));
  };
const failing =
  (status: number, text: string, headers: Record<string, string> = {}): Reply =>
  (response) => {
    response.writeHead(status, { "content-type": "application/json", ...headers });
    response.end(JSON.stringify({ type: "error", error: { type: "some_error", message: text } }));
  };
/** A stream of the given events; without message_stop at the end the socket is destroyed after them. */
const streaming =
  (events: Record<string, unknown>[], cut = false): Reply =>
  (response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    for (const event of events)
      response.write(`event: ${String(event.type)}\r\ndata: ${JSON.stringify(event)}\r\n\r\n`);
    if (cut) response.write("", () => response.socket?.destroy());
    else response.end();
  };
const delta = (text: string) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
const start = { type: "message_start", message: { id: "msg_1", usage: { input_tokens: 25, output_tokens: 1 } } };

beforeAll(async () => {
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  provider = adapterOf({ key: "claude", kind: "anthropic", baseUrl: base, apiKey: KEY });
});
afterAll(
  () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
);
beforeEach(() => {
  seen.length = 0;
  replies.length = 0;
});

const failureOf = async (call: ProviderCall): Promise<ProviderFailure> => {
  const error = await rejectionOf(provider.call(call));
  expect(error).toBeInstanceOf(ProviderFailure);
  return error as ProviderFailure;
};

describe("the Anthropic Messages adapter", () => {
  it("posts the system text top-level, the key as x-api-key and the API version", async () => {
    replies.push(message("Hello back."));
    const messages = [
      { role: "system" as const, content: "Answer in English." },
      { role: "user" as const, content: "Hello" },
    ];
    const answer = await provider.call(callOf({ instruction: "Be kind.", messages, maxOutputTokens: 64 }));
    expect(answer).toEqual({
      text: "Hello back.",
      citations: [],
      usage: { inputTokens: 12, outputTokens: 4 },
      stub: false,
      httpStatus: 200,
    });
    expect(seen[0].path).toBe("/v1/messages");
    expect(seen[0].headers["x-api-key"]).toBe(KEY);
    expect(seen[0].headers["anthropic-version"]).toBe("2023-06-01");
    expect(seen[0].headers.authorization).toBeUndefined();
    expect(seen[0].body).toEqual({
      model: "test-model",
      max_tokens: 64,
      system: "Be kind.\n\nAnswer in English.",
      messages: [{ role: "user", content: "Hello" }],
    });
  });

  it("streams text deltas and takes the usage from message_start and message_delta", async () => {
    replies.push(
      streaming([
        start,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "ping" },
        delta("Hi "),
        delta("there"),
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 6 } },
        { type: "message_stop" },
      ]),
    );
    const deltas: string[] = [];
    const answer = await provider.call(
      callOf({ messages: [{ role: "user", content: "Hi" }], onDelta: (d) => deltas.push(d) }),
    );
    expect(seen[0].body.stream).toBe(true);
    expect(deltas).toEqual(["Hi ", "there"]);
    expect(answer.text).toBe("Hi there");
    expect(answer.usage).toEqual({ inputTokens: 25, outputTokens: 6 });
  });

  it("fails a stream broken before message_stop, or by an error event, with what it delivered", async () => {
    replies.push(streaming([start, delta("half")], true));
    const cut = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }], onDelta: () => undefined }));
    expect(cut.code).toBe("ai.stream_interrupted");
    expect(cut.options).toMatchObject({
      retryable: false,
      breaker: true,
      partial: { text: "half", usage: { inputTokens: 25, outputTokens: 1 } },
    });

    replies.push(
      streaming([start, delta("some"), { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]),
    );
    const errored = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }], onDelta: () => undefined }));
    expect(errored.code).toBe("ai.stream_interrupted");
    expect(errored.message).toBe("Overloaded");
    expect(errored.options.partial?.text).toBe("some");
  });

  it("maps 429, 529 and 400 as the OpenAI adapter does", async () => {
    replies.push(
      failing(429, "rate limited", { "retry-after": "3" }),
      failing(529, "Overloaded"),
      failing(400, "max_tokens: too large"),
    );
    const call = callOf({ messages: [{ role: "user", content: "Hi" }] });
    expect((await failureOf(call)).options).toMatchObject({
      retryable: true,
      breaker: false,
      httpStatus: 429,
      retryAfterMs: 3000,
    });
    const overloaded = await failureOf(call);
    expect([overloaded.code, overloaded.options.retryable, overloaded.options.breaker]).toEqual([
      "ai.provider_failed",
      true,
      true,
    ]);
    const refused = await failureOf(call);
    expect([refused.code, refused.message, refused.options.breaker]).toEqual([
      "ai.provider_refused",
      "max_tokens: too large",
      false,
    ]);
  });

  it("times out a call the server does not answer", async () => {
    replies.push(() => undefined);
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }], timeoutMs: 150 }));
    expect(failure.code).toBe("ai.provider_timeout");
  });

  it("asks for JSON in the system text and reads classify's labels from the answer", async () => {
    replies.push(message('Here you go: {"labels": {"sports": 0.1, "finance": 0.9}}'));
    const answer = await provider.call(
      callOf({ operation: "classify", task: { text: "Stocks fell", labels: ["sports", "finance"] } }),
    );
    expect(seen[0].body.system).toContain("JSON");
    expect(seen[0].body.response_format).toBeUndefined();
    expect(answer.labels).toEqual([
      { label: "finance", score: 0.9 },
      { label: "sports", score: 0.1 },
    ]);
  });

  it("refuses embed without a request: Anthropic serves no embeddings", async () => {
    const failure = await failureOf(callOf({ operation: "embed", task: { inputs: ["a"] } }));
    expect(failure.code).toBe("ai.provider_refused");
    expect(failure.options).toMatchObject({ retryable: false, breaker: false });
    expect(seen).toHaveLength(0);
  });
});
