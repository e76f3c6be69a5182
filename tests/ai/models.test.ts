import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["ai"] });
const manager = () => t.token({ kind: "service", svc: "ops", caps: ["ai.provider.manage", "ai.usage.read"] });

const MINI = {
  provider: "openai",
  model: "gpt-4o-mini",
  operations: ["chat", "summarize"],
  context_tokens: 128000,
  max_output_tokens: 16384,
  input_micros_per_1k: 150,
  output_micros_per_1k: 600,
};

describe("models", () => {
  it("lists the seeded local models, filtered by provider", async () => {
    const token = await manager();
    const listed = await t.http("GET", "/ai/api/v1/models?provider=local", { token });
    expect(listed.status).toBe(200);
    expect(listed.body.models.map((model: { model: string }) => model.model)).toEqual(["extractive", "hash-embed"]);
    expect(listed.body.models[1]).toMatchObject({ provider: "local", operations: ["embed"], enabled: true });
  });

  it("registers a model of a registered provider (201), audited; 404 for an unknown provider, 409 twice", async () => {
    const token = await manager();
    const orphan = await t.http("POST", "/ai/api/v1/models", { token, body: MINI });
    expect([orphan.status, orphan.body.code]).toEqual([404, "ai.provider.not_found"]);

    await t.http("POST", "/ai/api/v1/providers", { token, body: { key: "openai", kind: "openai" } });
    const created = await t.http("POST", "/ai/api/v1/models", { token, body: MINI });
    expect(created.status).toBe(201);
    // Prices are integers (int64: strings in JSON), never floats.
    expect(created.body.model).toMatchObject({
      ...MINI,
      input_micros_per_1k: "150",
      output_micros_per_1k: "600",
      enabled: true,
    });
    const again = await t.http("POST", "/ai/api/v1/models", { token, body: MINI });
    expect([again.status, again.body.code]).toEqual([409, "ai.model_exists"]);

    const all = await t.http("GET", "/ai/api/v1/models", { token });
    expect(
      all.body.models.map((model: { provider: string; model: string }) => `${model.provider}/${model.model}`),
    ).toEqual(["local/extractive", "local/hash-embed", "openai/gpt-4o-mini"]);
    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=model", { token });
    expect(audit.body.audit).toHaveLength(1);
    expect(audit.body.audit[0]).toMatchObject({
      action: "model.registered",
      target_key: "openai/gpt-4o-mini",
      actor: "svc:ops",
      after: { operations: ["chat", "summarize"], input_micros_per_1k: 150 },
    });
  });

  it("refuses a model without operations or limits, or with an output limit past its context", async () => {
    const token = await manager();
    const post = (body: object) => t.http("POST", "/ai/api/v1/models", { token, body: { ...MINI, ...body } });
    const none = await post({ model: "a", operations: [] });
    expect([none.status, none.body.field]).toEqual([400, "operations"]);
    const past = await post({ model: "b", context_tokens: 100, max_output_tokens: 200 });
    expect([past.status, past.body.field]).toEqual([400, "max_output_tokens"]);
    const unknownOperation = await post({ model: "c", operations: ["dance"] });
    expect(unknownOperation.status).toBe(400);
  });

  it("updates only what a PATCH sets, audits the change, and 404s an unknown model", async () => {
    const token = await manager();
    const patched = await t.http("PATCH", "/ai/api/v1/models/local/extractive", {
      token,
      body: { output_micros_per_1k: 25, enabled: false },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.model).toMatchObject({
      operations: ["chat", "generate", "summarize", "classify", "extract", "enrich"],
      context_tokens: 32768,
      max_output_tokens: 4096,
      output_micros_per_1k: "25",
    });
    expect(patched.body.model.enabled ?? false).toBe(false);
    const narrowed = await t.http("PATCH", "/ai/api/v1/models/local/extractive", {
      token,
      body: { operations: ["summarize"], enabled: true },
    });
    expect(narrowed.body.model).toMatchObject({ operations: ["summarize"], enabled: true, output_micros_per_1k: "25" });
    const past = await t.http("PATCH", "/ai/api/v1/models/local/extractive", {
      token,
      body: { max_output_tokens: 40000 },
    });
    expect([past.status, past.body.field]).toEqual([400, "max_output_tokens"]);
    const missing = await t.http("PATCH", "/ai/api/v1/models/local/nope", { token, body: { enabled: false } });
    expect([missing.status, missing.body.code]).toEqual([404, "ai.model.not_found"]);

    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=model&target_key=local/extractive", { token });
    expect(audit.body.audit.map((entry: { action: string }) => entry.action)).toEqual([
      "model.updated",
      "model.updated",
    ]);
    expect(audit.body.audit[1]).toMatchObject({
      before: { output_micros_per_1k: 0, enabled: true },
      after: { output_micros_per_1k: 25, enabled: false },
    });
    const listed = await t.http("GET", "/ai/api/v1/models?provider=local", { token });
    expect(listed.body.models[0]).toMatchObject({ model: "extractive", operations: ["summarize"] });
  });

  it("refuses management without ai.provider.manage", async () => {
    const reader = await t.token({ kind: "service", svc: "ops", caps: ["ai.usage.read"] });
    const refused = await t.http("PATCH", "/ai/api/v1/models/local/extractive", {
      token: reader,
      body: { enabled: false },
    });
    expect(refused.status).toBe(403);
  });
});
