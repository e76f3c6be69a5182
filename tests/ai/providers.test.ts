import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../../services/ai/context.js";
import { sql } from "../../services/kit/db/sql.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { usePlatform } from "../support/platform.js";

/** A key's value no answer, audit entry or log line may ever hold. */
const MARKER = "sk-marker-7f3c9a1e5b2d4680";
const logLines: string[] = [];
const logger = createLogger(
  "trace",
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  }),
);

const t = usePlatform({
  services: ["ai"],
  logger,
  env: { PF_AI_PROVIDER_HOSTS: "api.openai.com,api.anthropic.com,127.0.0.1", PF_AI_TEST_KEY: MARKER },
});
const ctx = () => t.platform.contexts.get("ai") as AiContext;
const manager = () => t.token({ kind: "service", svc: "ops", caps: ["ai.provider.manage", "ai.usage.read"] });

describe("providers", () => {
  it("registers a provider (201) with its defaults, lists it, and never shows its key's value", async () => {
    const token = await manager();
    const created = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { key: "openai", kind: "openai", api_key_env: "PF_AI_TEST_KEY" },
    });
    expect(created.status).toBe(201);
    expect(created.body.provider).toMatchObject({
      key: "openai",
      kind: "openai",
      base_url: "https://api.openai.com/v1",
      api_key_env: "PF_AI_TEST_KEY",
      api_key_present: true,
      enabled: true,
      timeout_ms: 30000,
      max_retries: 2,
      breaker: { state: "closed", threshold: 5, open_ms: 30000 },
    });
    const unset = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: {
        key: "claude",
        kind: "anthropic",
        api_key_env: "PF_AI_NOT_SET",
        enabled: false,
        timeout_ms: 5000,
        max_retries: 0,
        breaker_threshold: 2,
        breaker_open_ms: 1000,
      },
    });
    expect(unset.status).toBe(201);
    expect(unset.body.provider).toMatchObject({ api_key_present: false, enabled: false, timeout_ms: 5000 });

    const listed = await t.http("GET", "/ai/api/v1/providers", { token });
    expect(listed.status).toBe(200);
    expect(listed.body.providers.map((provider: { key: string }) => provider.key)).toEqual([
      "claude",
      "local",
      "openai",
    ]);
    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=provider", { token });
    expect(audit.body.audit.map((entry: { action: string; target_key: string }) => entry.target_key)).toEqual([
      "claude",
      "openai",
    ]);
    expect(audit.body.audit[1]).toMatchObject({ action: "provider.registered", actor: "svc:ops" });
    expect(audit.body.audit[1].before).toBeUndefined();

    // The value is nowhere: not in an answer, an audit entry, a stored row or a log line.
    for (const body of [created.body, listed.body, audit.body]) expect(JSON.stringify(body)).not.toContain(MARKER);
    const rows = await sql(ctx().orm.em.fork(), `select * from {providers} p, {audit_log} a`);
    expect(JSON.stringify(rows)).not.toContain(MARKER);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join("")).not.toContain(MARKER);
  });

  it("refuses a key registered already (409) and a local provider's base URL", async () => {
    const token = await manager();
    const again = await t.http("POST", "/ai/api/v1/providers", { token, body: { key: "local", kind: "local" } });
    expect([again.status, again.body.code]).toEqual([409, "ai.provider_exists"]);
    const local = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { key: "stub2", kind: "local", base_url: "https://api.openai.com/v1" },
    });
    expect([local.status, local.body.code, local.body.field]).toEqual([400, "request.invalid", "base_url"]);
  });

  it("updates only the fields a PATCH sets, keeps the kind, and audits before and after", async () => {
    const token = await manager();
    await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { key: "vllm", kind: "openai", base_url: "http://127.0.0.1:8000/v1", timeout_ms: 2000 },
    });
    const patched = await t.http("PATCH", "/ai/api/v1/providers/vllm", { token, body: { max_retries: 4 } });
    expect(patched.status).toBe(200);
    expect(patched.body.provider).toMatchObject({
      base_url: "http://127.0.0.1:8000/v1",
      timeout_ms: 2000,
      max_retries: 4,
      enabled: true,
    });
    const kind = await t.http("PATCH", "/ai/api/v1/providers/vllm", { token, body: { kind: "anthropic" } });
    expect([kind.status, kind.body.field]).toEqual([400, "kind"]);
    const missing = await t.http("PATCH", "/ai/api/v1/providers/nope", { token, body: { max_retries: 1 } });
    expect([missing.status, missing.body.code]).toEqual([404, "ai.provider.not_found"]);
    // Asking for what already stands changes nothing and is not audited.
    await t.http("PATCH", "/ai/api/v1/providers/vllm", { token, body: { max_retries: 4 } });

    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=provider&target_key=vllm", { token });
    expect(audit.body.audit.map((entry: { action: string }) => entry.action)).toEqual([
      "provider.updated",
      "provider.registered",
    ]);
    expect(audit.body.audit[0].before).toMatchObject({ max_retries: 2, timeout_ms: 2000 });
    expect(audit.body.audit[0].after).toMatchObject({ max_retries: 4, timeout_ms: 2000 });
  });

  it("disables and enables a provider idempotently, auditing each change once", async () => {
    const token = await manager();
    const client = t.client(AiService, token);
    await client.registerProvider({ key: "toggled", kind: "local" });
    expect((await client.disableProvider({ key: "toggled" })).provider?.enabled).toBe(false);
    expect((await client.disableProvider({ key: "toggled" })).provider?.enabled).toBe(false);
    const enabled = await t.http("POST", "/ai/api/v1/providers/toggled/enable", { token, body: {} });
    expect([enabled.status, enabled.body.provider.enabled]).toEqual([200, true]);
    const unknown = await t.http("POST", "/ai/api/v1/providers/nope/disable", { token, body: {} });
    expect([unknown.status, unknown.body.code]).toEqual([404, "ai.provider.not_found"]);

    const audit = await t.http("GET", "/ai/api/v1/audit?target_key=toggled", { token });
    expect(audit.body.audit.map((entry: { action: string }) => entry.action)).toEqual([
      "provider.enabled",
      "provider.disabled",
      "provider.registered",
    ]);
  });

  it("resets an open breaker to closed for every instance, audited", async () => {
    const token = await manager();
    await t.http("POST", "/ai/api/v1/providers", { token, body: { key: "flaky", kind: "local" } });
    await sql(
      ctx().orm.em.fork(),
      `update {providers} set breaker_state = 'open', breaker_failures = 5, breaker_opened_at = now(),
         breaker_reopens_at = now() + interval '1 hour' where key = 'flaky'`,
    );
    const before = await t.http("GET", "/ai/api/v1/providers", { token });
    const flaky = before.body.providers.find((provider: { key: string }) => provider.key === "flaky");
    expect(flaky.breaker).toMatchObject({ state: "open", failures: 5 });
    expect(flaky.breaker.reopens_at).toBeDefined();

    const reset = await t.http("POST", "/ai/api/v1/providers/flaky/reset", { token, body: {} });
    expect(reset.status).toBe(200);
    expect(reset.body.provider.breaker).toMatchObject({ state: "closed" });
    expect(reset.body.provider.breaker.failures ?? 0).toBe(0);
    const audit = await t.http("GET", "/ai/api/v1/audit?target_key=flaky", { token });
    expect(audit.body.audit[0]).toMatchObject({
      action: "provider.breaker_reset",
      before: { breaker_state: "open", breaker_failures: 5 },
      after: { breaker_state: "closed", breaker_failures: 0 },
    });
    const unknown = await t.http("POST", "/ai/api/v1/providers/nope/reset", { token, body: {} });
    expect([unknown.status, unknown.body.code]).toEqual([404, "ai.provider.not_found"]);
  });

  it("refuses management without ai.provider.manage, and to user and app tokens", async () => {
    const reader = await t.token({ kind: "service", svc: "ops", caps: ["ai.usage.read"] });
    const refused = await t.http("POST", "/ai/api/v1/providers", {
      token: reader,
      body: { key: "x", kind: "local" },
    });
    expect(refused.status).toBe(403);
    const user = await t.token({ kind: "user", sub: "usr_01hzzzzzzzzzzzzzzzzzzzzzzz" });
    expect((await t.http("POST", "/ai/api/v1/providers/local/disable", { token: user, body: {} })).status).toBe(403);
    const app = await t.token({ kind: "app", app_id: "console", caps: ["ai.provider.manage"] });
    expect((await t.http("POST", "/ai/api/v1/providers/local/disable", { token: app, body: {} })).status).toBe(403);
    expect((await t.http("GET", "/ai/api/v1/providers", { token: reader })).status).toBe(200);
  });
});
