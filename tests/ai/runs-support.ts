import type { TestPlatform } from "../support/platform.js";

/** Admin calls through the gateway, as an operator's service. */
export async function operator(t: TestPlatform) {
  const token = await t.token({
    kind: "service",
    sub: "svc:ops",
    caps: ["ai.provider.manage", "ai.workflow.manage", "ai.usage.read", "ai.run.read"],
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await t.http(method, `/ai/api/v1${path}`, { token, body });
    if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  return {
    call,
    /** An OpenAI-compatible provider at the loopback server, with one chat model `m1`. */
    async provider(key: string, url: string, settings: Record<string, unknown> = {}) {
      await call("POST", "/providers", {
        key,
        kind: "openai",
        base_url: url,
        api_key_env: "PF_AI_TEST_KEY",
        ...settings,
      });
      await call("POST", "/models", {
        provider: key,
        model: "m1",
        operations: ["chat", "generate", "summarize"],
        context_tokens: 8000,
        max_output_tokens: 500,
      });
    },
    /** A routing profile with these targets, active. */
    async route(key: string, targets: string[]) {
      const created = await call("POST", `/routes/${key}/versions`, { body: { targets } });
      const version = created.version?.version ?? created.version ?? 1;
      await call("POST", `/routes/${key}/versions/${version}/status`, { status: "active" });
    },
    async breaker(key: string) {
      const listed = await call("GET", "/providers");
      return listed.providers.find((each: { key: string }) => each.key === key).breaker;
    },
    async requestsOf(runId: string) {
      const listed = await call("GET", "/requests?limit=100");
      return listed.requests.filter((each: { run_id: string }) => each.run_id === runId);
    },
  };
}

/** A caller of its own (its own quotas). */
let callers = 0;
export const someone = (t: TestPlatform) => t.token({ kind: "user", sub: `usr_remote${++callers}${Date.now()}` });
