import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { adapterOf } from "../../services/ai/providers/index.js";
import { ProviderFailure, type ModelProvider, type ProviderCall } from "../../services/ai/providers/provider.js";
import { until } from "../support/until.js";
import { startOpenAiServer, type OpenAiServer } from "./support/openai-server.js";
import { callOf, rejectionOf } from "./support/provider-call.js";

const KEY = "sk-test-secret-value";
let server: OpenAiServer;
let provider: ModelProvider;

beforeAll(async () => {
  server = await startOpenAiServer();
  provider = adapterOf({ key: "loop", kind: "openai", baseUrl: server.url, apiKey: KEY });
});
afterAll(() => server.close());
beforeEach(() => {
  server.received.length = 0;
  server.script(undefined);
});

const failureOf = async (call: ProviderCall, on = provider): Promise<ProviderFailure> => {
  const error = await rejectionOf(on.call(call));
  expect(error).toBeInstanceOf(ProviderFailure);
  return error as ProviderFailure;
};

/** A promise the test settles, for a stall it releases. */
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
};

describe("the OpenAI-compatible adapter", () => {
  it("posts a chat completion with the instruction as the system message and the key as a bearer token", async () => {
    server.enqueue({ kind: "answer", content: "Hi there.", usage: { prompt_tokens: 21, completion_tokens: 3 } });
    const messages = [{ role: "user" as const, content: "Hello?" }];
    const answer = await provider.call(
      callOf({ instruction: "Be brief.", messages, temperature: 0.2, maxOutputTokens: 50 }),
    );
    expect(answer).toEqual({
      text: "Hi there.",
      citations: [],
      usage: { inputTokens: 21, outputTokens: 3 },
      stub: false,
      httpStatus: 200,
    });
    const [request] = server.received;
    expect(request.path).toBe("/chat/completions");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body).toEqual({
      model: "test-model",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello?" },
      ],
      max_tokens: 50,
      temperature: 0.2,
    });
  });

  it("sends no Authorization header without a key, and estimates usage a server does not report", async () => {
    const keyless = adapterOf({ key: "ollama", kind: "openai", baseUrl: `${server.url}/`, apiKey: "" });
    server.enqueue({ kind: "answer", content: "12345678", usage: null });
    const answer = await keyless.call(callOf({ operation: "generate", task: { text: "abcd".repeat(5) } }));
    expect(server.received[0].headers.authorization).toBeUndefined();
    expect(server.received[0].body?.messages).toEqual([{ role: "user", content: "abcd".repeat(5) }]);
    expect(answer.usage).toEqual({ inputTokens: 5, outputTokens: 2 });
  });

  it("streams deltas in order, asks for the usage and reads it from the last chunk", async () => {
    server.enqueue({
      kind: "stream",
      chunks: ["Hel", "lo ", "world"],
      usage: { prompt_tokens: 9, completion_tokens: 4 },
    });
    const deltas: string[] = [];
    const answer = await provider.call(
      callOf({ messages: [{ role: "user", content: "Hi" }], onDelta: (d) => deltas.push(d) }),
    );
    expect(deltas).toEqual(["Hel", "lo ", "world"]);
    expect(answer.text).toBe("Hello world");
    expect(answer.usage).toEqual({ inputTokens: 9, outputTokens: 4 });
    expect(server.received[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("estimates a stream's usage as characters / 4 when the server sends none", async () => {
    server.enqueue({ kind: "stream", chunks: ["abcde"], usage: null });
    const answer = await provider.call(
      callOf({ messages: [{ role: "user", content: "123456789" }], onDelta: () => undefined }),
    );
    expect(answer.usage).toEqual({ inputTokens: 3, outputTokens: 2 });
  });

  it.each([["cut" as const], ["close" as const]])(
    "fails a stream that ends by %s before [DONE], with what it delivered",
    async (end) => {
      server.enqueue({ kind: "stream", chunks: ["partial ", "text"], end });
      const deltas: string[] = [];
      const failure = await failureOf(
        callOf({ messages: [{ role: "user", content: "Hi" }], onDelta: (d) => deltas.push(d) }),
      );
      expect(failure.code).toBe("ai.stream_interrupted");
      expect(failure.options).toMatchObject({ retryable: false, breaker: true });
      expect(failure.options.partial).toEqual({ text: "partial text", usage: { inputTokens: 1, outputTokens: 3 } });
      expect(deltas.join("")).toBe("partial text");
    },
  );

  it("times out a stalled call as retryable and counting towards the breaker", async () => {
    server.enqueue({ kind: "stall" });
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }], timeoutMs: 150 }));
    expect(failure.code).toBe("ai.provider_timeout");
    expect(failure.options).toMatchObject({ retryable: true, breaker: true });
  });

  it("times out a stream that stalls mid-way, keeping what it delivered", async () => {
    server.enqueue({ kind: "stream", chunks: ["first ", new Promise(() => undefined)] });
    const failure = await failureOf(
      callOf({ messages: [{ role: "user", content: "Hi" }], timeoutMs: 300, onDelta: () => undefined }),
    );
    expect(failure.code).toBe("ai.provider_timeout");
    expect(failure.options.partial?.text).toBe("first ");
  });

  it("stops a canceled call: ai.run_canceled, not retryable, no breaker; mid-stream with the partial text", async () => {
    const abort = new AbortController();
    const held = gate();
    server.enqueue({ kind: "stream", chunks: ["so far", held.opened, "never"] });
    const call = provider.call(
      callOf({ messages: [{ role: "user", content: "Hi" }], signal: abort.signal, onDelta: () => abort.abort() }),
    );
    const failure = (await rejectionOf(call)) as ProviderFailure;
    held.open();
    expect(failure.code).toBe("ai.run_canceled");
    expect(failure.options).toMatchObject({ retryable: false, breaker: false, partial: { text: "so far" } });

    const stalled = new AbortController();
    server.enqueue({ kind: "stall" });
    const waiting = provider.call(callOf({ messages: [{ role: "user", content: "Hi" }], signal: stalled.signal }));
    await until(() => server.received.length === 2);
    stalled.abort();
    expect(((await rejectionOf(waiting)) as ProviderFailure).code).toBe("ai.run_canceled");
  });

  it("answers a later stall once the test releases it", async () => {
    const held = gate();
    server.enqueue({ kind: "stall", until: held.opened, then: { kind: "answer", content: "late" } });
    const answer = provider.call(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    await until(() => server.received.length === 1);
    held.open();
    expect((await answer).text).toBe("late");
  });

  it.each([
    ["retry-after seconds", { "retry-after": "2" }, 2000],
    ["retry-after-ms", { "retry-after-ms": "1500", "retry-after": "9" }, 1500],
  ])("maps 429 to ai.provider_rate_limited with %s", async (_, headers, wait) => {
    server.enqueue({ kind: "status", status: 429, headers, message: "slow down" });
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    expect(failure.code).toBe("ai.provider_rate_limited");
    expect(failure.message).toBe("slow down");
    expect(failure.options).toMatchObject({ retryable: true, breaker: false, httpStatus: 429, retryAfterMs: wait });
  });

  it("reads a 429's retry-after given as an HTTP date", async () => {
    server.enqueue({
      kind: "status",
      status: 429,
      headers: { "retry-after": new Date(Date.now() + 60_000).toUTCString() },
    });
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    expect(failure.options.retryAfterMs).toBeGreaterThan(50_000);
    expect(failure.options.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it("maps 5xx to a retryable ai.provider_failed counting towards the breaker", async () => {
    server.enqueue({ kind: "status", status: 503 });
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    expect(failure.code).toBe("ai.provider_failed");
    expect(failure.options).toMatchObject({ retryable: true, breaker: true, httpStatus: 503 });
  });

  it("maps other 4xx to ai.provider_refused with the provider's message, trimmed and without the key", async () => {
    server.enqueue({ kind: "status", status: 401, message: `Incorrect API key provided: ${KEY}. ${"x".repeat(400)}` });
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    expect(failure.code).toBe("ai.provider_refused");
    expect(failure.options).toMatchObject({ retryable: false, breaker: false, httpStatus: 401 });
    expect(failure.message).toMatch(/^Incorrect API key provided: \[key\]\. x+…$/);
    expect(failure.message).toHaveLength(300);
    expect(failure.message).not.toContain(KEY);
  });

  it("maps a refused connection and a dropped socket to a retryable ai.provider_failed", async () => {
    const gone = await startOpenAiServer();
    await gone.close();
    const closed = adapterOf({ key: "gone", kind: "openai", baseUrl: gone.url, apiKey: "" });
    const refused = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }), closed);
    expect(refused.code).toBe("ai.provider_failed");
    expect(refused.message).toContain("ECONNREFUSED");
    expect(refused.options).toMatchObject({ retryable: true, breaker: true });

    server.enqueue({ kind: "cut" });
    const dropped = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    expect(dropped.code).toBe("ai.provider_failed");
    expect(dropped.options).toMatchObject({ retryable: true, breaker: true });
  });

  it("stops reading an answer past 8 MiB", async () => {
    server.enqueue({ kind: "answer", content: "x".repeat(9 * 1024 * 1024) });
    const failure = await failureOf(callOf({ messages: [{ role: "user", content: "Hi" }] }));
    expect(failure.code).toBe("ai.provider_failed");
    expect(failure.message).toContain("bytes");
  });
});

describe("the OpenAI-compatible adapter's operations", () => {
  const documents = [
    {
      id: "doc_a",
      url: "https://a.example/1",
      title: "Bitcoin",
      text: "Markets opened calm. Bitcoin rose sharply on ETF inflows.",
    },
    { id: "doc_b", url: "https://b.example/2", title: "", text: "The central bank held rates steady." },
  ];

  it("numbers the documents for summarize and turns [n] markers into citations of the cited sentences", async () => {
    server.enqueue({ kind: "answer", content: "Bitcoin rose on inflows [1]. Rates stayed steady [2][7]." });
    const answer = await provider.call(
      callOf({ operation: "summarize", instruction: "Mention prices.", task: { documents } }),
    );
    const messages = server.received[0].body?.messages as { role: string; content: string }[];
    expect(messages[0].role).toBe("system");
    expect(messages[0].content).toMatch(/\[1\][\s\S]*Mention prices\.$/);
    expect(messages[1].content).toBe(
      "[1] (doc_a) Bitcoin\n\nMarkets opened calm. Bitcoin rose sharply on ETF inflows.\n\n[2] (doc_b) The central bank held rates steady.",
    );
    expect(answer.text).toBe("Bitcoin rose on inflows [1]. Rates stayed steady [2][7].");
    expect(answer.citations).toEqual([
      {
        documentId: "doc_a",
        url: "https://a.example/1",
        quote: "Bitcoin rose sharply on ETF inflows.",
        start: 21,
        end: 57,
      },
      {
        documentId: "doc_b",
        url: "https://b.example/2",
        quote: "The central bank held rates steady.",
        start: 0,
        end: 35,
      },
    ]);
    for (const citation of answer.citations) {
      const text = documents.find((document) => document.id === citation.documentId)?.text;
      expect(text?.slice(citation.start, citation.end)).toBe(citation.quote);
    }
  });

  it("asks classify for JSON and keeps only the given labels, clamped to 0..1, best first", async () => {
    server.enqueue({
      kind: "answer",
      content: '```json\n{"labels": {"Bear": 0.3, "bull": 0.8, "other": 5, "neutral": 7}}\n```',
    });
    const answer = await provider.call(
      callOf({ operation: "classify", task: { text: "BTC up", labels: ["bear", "bull", "neutral", "flat"] } }),
    );
    expect(server.received[0].body?.response_format).toEqual({ type: "json_object" });
    expect(answer.labels).toEqual([
      { label: "neutral", score: 1 },
      { label: "bull", score: 0.8 },
      { label: "bear", score: 0.3 },
      { label: "flat", score: 0 },
    ]);
  });

  it("fails an answer that is not the JSON asked for: not retryable, no breaker", async () => {
    server.enqueue({ kind: "answer", content: "I think it is bullish." });
    const failure = await failureOf(callOf({ operation: "classify", task: { text: "BTC up", labels: ["bull"] } }));
    expect(failure.code).toBe("ai.provider_failed");
    expect(failure.options).toMatchObject({ retryable: false, breaker: false });
  });

  it("gives extract every asked field, null when the model left it out", async () => {
    server.enqueue({ kind: "answer", content: '{"email": "a@b.example", "phone": null, "extra": 1}' });
    const answer = await provider.call(
      callOf({ operation: "extract", task: { text: "mail a@b.example", fields: ["email", "phone", "date"] } }),
    );
    expect(answer.fields).toEqual({ email: "a@b.example", phone: null, date: null });
  });

  it("reads enrich's keywords, entities, language and summary, counting words itself", async () => {
    const content = JSON.stringify({
      keywords: ["bitcoin"],
      entities: [{ name: "Coinbase" }, "SEC"],
      language: "en",
      summary: "BTC.",
    });
    server.enqueue({ kind: "answer", content });
    const answer = await provider.call(
      callOf({ operation: "enrich", task: { text: "Coinbase and the SEC talk bitcoin." } }),
    );
    expect(answer.fields).toEqual({
      keywords: ["bitcoin"],
      entities: ["Coinbase", "SEC"],
      language: "en",
      summary: "BTC.",
      word_count: 6,
      reading_time_seconds: 2,
    });
  });

  it("posts embed to /embeddings and answers one vector per input, in input order", async () => {
    server.enqueue({
      kind: "embed",
      vectors: [
        [1, 0],
        [0, 1],
      ],
    });
    const answer = await provider.call(
      callOf({ operation: "embed", model: "text-embedding-3-small", task: { inputs: ["one", "two"] } }),
    );
    expect(server.received[0].path).toBe("/embeddings");
    expect(server.received[0].body).toEqual({ model: "text-embedding-3-small", input: ["one", "two"] });
    expect(answer.embeddings).toEqual([
      [1, 0],
      [0, 1],
    ]);
    expect(answer.usage).toEqual({ inputTokens: 2, outputTokens: 0 });
    expect(answer.stub).toBe(false);
  });

  it("fails embeddings that are not one vector per input", async () => {
    server.enqueue({ kind: "embed", vectors: [[1, 0]] });
    const failure = await failureOf(callOf({ operation: "embed", task: { inputs: ["one", "two"] } }));
    expect(failure.code).toBe("ai.provider_failed");
  });
});
