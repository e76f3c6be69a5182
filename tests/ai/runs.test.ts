import { describe, expect, it } from "vitest";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["ai"] });

const DOCUMENTS = [
  {
    id: "src_1",
    url: "https://example.test/a",
    title: "Chips",
    text: "Shares of ACME rose four percent on Tuesday after the company raised its forecast for chip demand.",
  },
  {
    id: "src_2",
    url: "https://example.test/b",
    title: "Rates",
    text: "Analysts said the rise followed a broader rally in semiconductor stocks as bond yields fell.",
  },
];

let users = 0;
const user = () => t.token({ kind: "user", sub: `usr_runs${++users}` });
const trade = () => t.token({ kind: "service", sub: "svc:trade", caps: ["ai.run.create"], ns: ["trade"] });

describe("direct operations on the local provider", () => {
  const cases: [string, Record<string, unknown>, (body: any) => void][] = [
    [
      "chat",
      { messages: [{ role: "user", content: "What moved ACME shares today?" }] },
      (run) => {
        expect(run.output.text).not.toBe("");
      },
    ],
    ["generate", { text: "Write a line about chip demand." }, (run) => expect(run.output.text).not.toBe("")],
    [
      "generate",
      { prompt: "Write a line about chip demand." },
      (run) => expect(run.output.text).toContain("Write a line about chip demand."),
    ],
    [
      "summarize",
      { documents: DOCUMENTS },
      (run) => {
        expect(run.output.text).not.toBe("");
        expect(run.citations.length).toBeGreaterThan(0);
        expect(["src_1", "src_2"]).toContain(run.citations[0].document_id);
      },
    ],
    [
      "classify",
      { text: "ACME shares rose on chip demand.", labels: ["markets", "sports"] },
      (run) => {
        expect(run.output.labels.map((each: { label: string }) => each.label).sort()).toEqual(["markets", "sports"]);
      },
    ],
    [
      "extract",
      { text: "ACME shares rose four percent on Tuesday.", fields: ["company", "weekday"] },
      (run) => {
        expect(Object.keys(run.output.fields).sort()).toEqual(["company", "weekday"]);
      },
    ],
    [
      "enrich",
      { text: "ACME shares rose four percent on Tuesday after chip demand grew." },
      (run) => {
        expect(run.output.fields).toBeTruthy();
      },
    ],
    [
      "embed",
      { inputs: ["chip demand", "bond yields"] },
      (run) => {
        expect(run.output.embeddings).toHaveLength(2);
        expect(run.output.embeddings[0].values.length).toBeGreaterThan(0);
      },
    ],
  ];
  for (const [operation, body, check] of cases)
    it(`${operation}: 200, stubbed by local, usage counted`, async () => {
      const answer = await t.http("POST", `/ai/api/v1/${operation}`, {
        token: await user(),
        body: { ...body, no_cache: true },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const run = answer.body.run;
      expect(run).toMatchObject({ operation, state: "succeeded", stub: true, provider: "local", namespace: "direct" });
      expect(run.model).toBe(operation === "embed" ? "hash-embed" : "extractive");
      expect(run.attempts).toBe(1);
      expect(run.id).toMatch(/^air_/);
      expect(run.usage.input_tokens).toBeGreaterThan(0);
      check(run);
    });

  it("refuses what an operation cannot use, naming the field", async () => {
    const token = await user();
    // A field its route does not read is refused before the handler, as an unknown one is.
    const chat = await t.http("POST", "/ai/api/v1/chat", { token, body: { text: "hello" } });
    expect(chat.status).toBe(400);
    expect(chat.body).toMatchObject({ code: "request.invalid", field: "text" });
    const empty = await t.http("POST", "/ai/api/v1/chat", { token, body: {} });
    expect(empty.body).toMatchObject({ code: "ai.input.invalid", field: "messages" });
    const twice = await t.http("POST", "/ai/api/v1/generate", { token, body: { prompt: "a", text: "b" } });
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ code: "ai.input.invalid", field: "prompt" });
    const notRead = await t.http("POST", "/ai/api/v1/summarize", { token, body: { prompt: "a" } });
    expect(notRead.body).toMatchObject({ code: "request.invalid", field: "prompt" });
    // A workflow's operation decides what it reads: a summarize workflow takes no labels.
    const stray = await t.http("POST", "/ai/api/v1/runs", {
      token,
      body: { workflow: "trade.summarize_market_context", variables: { symbol: "ACME" }, labels: ["a"] },
    });
    expect(stray.body).toMatchObject({ code: "ai.input.invalid", field: "labels" });
    const workflow = await t.http("POST", "/ai/api/v1/generate", {
      token,
      body: { text: "x", workflow: "trade.summarize_market_context" },
    });
    expect(workflow.body).toMatchObject({ code: "request.invalid", field: "workflow" });
    const none = await t.http("POST", "/ai/api/v1/runs", { token, body: { variables: { symbol: "ACME" } } });
    expect(none.status).toBe(400);
    expect(none.body.field).toBe("workflow");
  });

  it("answers a repeated request from the cache, no_cache skipping it", async () => {
    const token = await user();
    const body = { text: "A cached line about chip demand and bond yields." };
    const first = await t.http("POST", "/ai/api/v1/summarize", { token, body });
    expect(first.body.run).toMatchObject({ state: "succeeded", cache_hit: false });
    const second = await t.http("POST", "/ai/api/v1/summarize", { token, body });
    expect(second.body.run).toMatchObject({ state: "succeeded", cache_hit: true, attempts: 0 });
    expect(second.body.run.output.text).toBe(first.body.run.output.text);
    expect(second.body.run.usage).toEqual({ input_tokens: 0, output_tokens: 0 });
    const skipped = await t.http("POST", "/ai/api/v1/summarize", { token, body: { ...body, no_cache: true } });
    expect(skipped.body.run).toMatchObject({ cache_hit: false, attempts: 1 });
  });

  it("refuses an input larger than the model's context before any run", async () => {
    const answer = await t.http("POST", "/ai/api/v1/generate", {
      token: await user(),
      body: { text: "x".repeat(150_000) },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("ai.context_exceeded");
  });
});

describe("workflow runs", () => {
  it("runs trade.summarize_market_context with documents, readable by its caller and a reader service only", async () => {
    const token = await trade();
    const answer = await t.http("POST", "/ai/api/v1/runs", {
      token,
      body: { workflow: "trade.summarize_market_context", variables: { symbol: "ACME" }, documents: DOCUMENTS },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const run = answer.body.run;
    expect(run).toMatchObject({
      operation: "workflow",
      workflow: "trade.summarize_market_context",
      workflow_version: 1,
      namespace: "trade",
      caller: "svc:trade",
      state: "succeeded",
      stub: true,
      provider: "local",
      model: "extractive",
    });
    expect(run.citations.length).toBeGreaterThan(0);
    expect(run.usage.input_tokens).toBeGreaterThan(0);

    const own = await t.http("GET", `/ai/api/v1/runs/${run.id}`, { token });
    expect(own.status).toBe(200);
    expect(own.body.run).toMatchObject({ id: run.id, state: "succeeded" });
    const other = await t.http("GET", `/ai/api/v1/runs/${run.id}`, { token: await user() });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe("ai.run.not_found");
    const reader = await t.token({ kind: "service", sub: "svc:audit", caps: ["ai.run.read"] });
    const read = await t.http("GET", `/ai/api/v1/runs/${run.id}`, { token: reader });
    expect(read.status).toBe(200);
    expect(read.body.run.id).toBe(run.id);
    // Over RPC as well.
    const rpc = await t.client(AiService, token).getRun({ id: run.id });
    expect(rpc.run?.state).toBe("succeeded");
  });

  it("holds runs to the token's ns claim", async () => {
    const token = await trade();
    const reviews = await t.http("POST", "/ai/api/v1/runs", {
      token,
      body: { workflow: "reviews.summarize_entity", variables: { entity: "ACME" }, documents: DOCUMENTS },
    });
    expect(reviews.status).toBe(403);
    expect(reviews.body.code).toBe("ai.namespace_refused");
    const news = await t.http("POST", "/ai/api/v1/summarize", { token, body: { namespace: "news", text: "x" } });
    expect(news.status).toBe(403);
    expect(news.body.code).toBe("ai.namespace_refused");
    const own = await t.http("POST", "/ai/api/v1/summarize", { token, body: { text: "Chip demand grew." } });
    expect(own.status).toBe(200);
    expect(own.body.run.namespace).toBe("trade");
  });

  it("refuses an unknown workflow and a missing variable", async () => {
    const token = await user();
    const unknown = await t.http("POST", "/ai/api/v1/runs", { token, body: { workflow: "trade.nothing_here" } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("ai.workflow.not_found");
    const missing = await t.http("POST", "/ai/api/v1/runs", {
      token,
      body: { workflow: "trade.summarize_market_context", documents: DOCUMENTS },
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: "ai.input.invalid", field: "variables.symbol" });
  });
});
