import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { checkedBaseUrl, checkSecretReference, looksLikeSecretValue } from "../../services/ai/domain/secrets.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { usePlatform } from "../support/platform.js";

/** The problem code a check throws, or "" when it passes. */
function refusal(check: () => unknown): string {
  try {
    check();
    return "";
  } catch (error) {
    if (!(error instanceof ConnectError)) throw error;
    return problemOf(error).code;
  }
}

const HOSTS = ["api.openai.com", "api.anthropic.com", "127.0.0.1:8080", "llm.internal.example"];

describe("secret references (pure rules)", () => {
  it("takes a PF_AI_ variable's name, or none", () => {
    expect(refusal(() => checkSecretReference({ apiKey: "", apiKeyEnv: "PF_AI_OPENAI_KEY" }))).toBe("");
    expect(refusal(() => checkSecretReference({ apiKey: "", apiKeyEnv: "" }))).toBe("");
    expect(refusal(() => checkSecretReference({ apiKey: "" }))).toBe("");
  });

  it("refuses any api_key, and an api_key_env that is a value, without repeating it", () => {
    const values = [
      "sk-proj-abc123def456",
      "SK-ABCDEF",
      "PF_AI_key",
      "PF-AI-KEY",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
      "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
      "AKIAIOSFODNN7EXAMPLE",
      `PF_AI_${"A".repeat(101)}`,
    ];
    for (const value of values) {
      expect(looksLikeSecretValue(value), value).toBe(true);
      expect(
        refusal(() => checkSecretReference({ apiKey: "", apiKeyEnv: value })),
        value,
      ).toBe("ai.secret_value_refused");
      try {
        checkSecretReference({ apiKey: "", apiKeyEnv: value });
      } catch (error) {
        expect(JSON.stringify(problemOf(error))).not.toContain(value);
      }
    }
    expect(refusal(() => checkSecretReference({ apiKey: "sk-live-123", apiKeyEnv: "PF_AI_KEY" }))).toBe(
      "ai.secret_value_refused",
    );
  });

  it("refuses another variable's name: only PF_AI_ ones are read", () => {
    for (const name of ["PF_JWT_PRIVATE_KEY", "DATABASE_URL", "PF_AI_", "HOME", "PF_AIX_KEY"])
      expect(
        refusal(() => checkSecretReference({ apiKey: "", apiKeyEnv: name })),
        name,
      ).toBe("ai.secret_env_refused");
    expect(looksLikeSecretValue("PF_JWT_PRIVATE_KEY")).toBe(false);
  });
});

describe("base URLs (pure rules)", () => {
  it("takes https to a listed host (any port of a bare host), http only to a listed loopback host and port", () => {
    expect(checkedBaseUrl("openai", "https://api.openai.com/v1/", HOSTS)).toBe("https://api.openai.com/v1");
    expect(checkedBaseUrl("openai", "https://LLM.internal.example:8443/v1", HOSTS)).toBe(
      "https://llm.internal.example:8443/v1",
    );
    expect(checkedBaseUrl("openai", "http://127.0.0.1:8080/v1", HOSTS)).toBe("http://127.0.0.1:8080/v1");
    expect(checkedBaseUrl("anthropic", undefined, HOSTS)).toBe("https://api.anthropic.com/v1");
    expect(checkedBaseUrl("local", undefined, HOSTS)).toBe("");
  });

  it("refuses other hosts, http elsewhere, credentials, queries, other schemes and a local provider's URL", () => {
    const cases: [string, string | undefined, string][] = [
      ["openai", "https://evil.example/v1", "ai.provider_host_refused"],
      ["openai", "https://api.openai.com.evil.example/v1", "ai.provider_host_refused"],
      ["openai", "http://api.openai.com/v1", "ai.provider_host_refused"],
      ["openai", "http://127.0.0.1:9999/v1", "ai.provider_host_refused"],
      ["openai", "https://user:sk-secret@api.openai.com/v1", "ai.secret_value_refused"],
      ["openai", "https://api.openai.com/v1?key=x", "request.invalid"],
      ["openai", "https://api.openai.com/v1#x", "request.invalid"],
      ["openai", "file:///etc/passwd", "request.invalid"],
      ["openai", "not a url", "request.invalid"],
      ["local", "https://api.openai.com/v1", "request.invalid"],
    ];
    for (const [kind, url, code] of cases)
      expect(
        refusal(() => checkedBaseUrl(kind, url, HOSTS)),
        url,
      ).toBe(code);
    expect(refusal(() => checkedBaseUrl("openai", undefined, ["llm.internal.example"]))).toBe(
      "ai.provider_host_refused",
    );
  });
});

const t = usePlatform({ services: ["ai"], env: { PF_AI_PROVIDER_HOSTS: "api.openai.com" } });

describe("secret refusals on the routes", () => {
  const manager = () => t.token({ kind: "service", svc: "ops", caps: ["ai.provider.manage", "ai.usage.read"] });

  it("refuses a value, another service's secret and an unlisted host, storing and auditing nothing", async () => {
    const token = await manager();
    const base = { key: "leaky", kind: "openai", base_url: "https://api.openai.com/v1" };
    const asValue = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { ...base, api_key: "sk-live-0123456789abcdef" },
    });
    expect([asValue.status, asValue.body.code]).toEqual([400, "ai.secret_value_refused"]);
    expect(JSON.stringify(asValue.body)).not.toContain("sk-live-0123456789abcdef");

    const keyAsName = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { ...base, api_key_env: "sk-live-0123456789abcdef" },
    });
    expect([keyAsName.status, keyAsName.body.code]).toEqual([400, "ai.secret_value_refused"]);
    expect(JSON.stringify(keyAsName.body)).not.toContain("sk-live-0123456789abcdef");

    const foreign = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { ...base, api_key_env: "PF_JWT_PRIVATE_KEY" },
    });
    expect([foreign.status, foreign.body.code]).toEqual([400, "ai.secret_env_refused"]);

    const host = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { ...base, base_url: "https://attacker.example/v1", api_key_env: "PF_AI_OPENAI_KEY" },
    });
    expect([host.status, host.body.code]).toEqual([400, "ai.provider_host_refused"]);

    const providers = await t.http("GET", "/ai/api/v1/providers", { token });
    expect(providers.body.providers.map((provider: { key: string }) => provider.key)).toEqual(["local"]);
    const audit = await t.http("GET", "/ai/api/v1/audit", { token });
    expect(audit.body.audit ?? []).toEqual([]);
  });

  it("applies the same rules to an update, and audits the change it does take", async () => {
    const token = await manager();
    const created = await t.http("POST", "/ai/api/v1/providers", {
      token,
      body: { key: "openai", kind: "openai", base_url: "https://api.openai.com/v1", api_key_env: "PF_AI_OPENAI" },
    });
    expect(created.status).toBe(201);
    const patch = (body: object) => t.http("PATCH", "/ai/api/v1/providers/openai", { token, body });
    expect((await patch({ api_key: "sk-abc" })).body.code).toBe("ai.secret_value_refused");
    expect((await patch({ api_key_env: "PF_JWT_PRIVATE_KEY" })).body.code).toBe("ai.secret_env_refused");
    expect((await patch({ base_url: "https://attacker.example/v1" })).body.code).toBe("ai.provider_host_refused");
    const renamed = await patch({ api_key_env: "PF_AI_OPENAI_2" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.provider).toMatchObject({ api_key_env: "PF_AI_OPENAI_2", api_key_present: false });

    const audit = await t.http("GET", "/ai/api/v1/audit?target_kind=provider&target_key=openai", { token });
    expect(audit.body.audit.map((entry: { action: string }) => entry.action)).toEqual([
      "provider.updated",
      "provider.registered",
    ]);
    expect(audit.body.audit[0]).toMatchObject({
      actor: "svc:ops",
      before: { api_key_env: "PF_AI_OPENAI" },
      after: { api_key_env: "PF_AI_OPENAI_2" },
    });
  });
});
