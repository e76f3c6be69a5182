import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { operator, someone } from "./runs-support.js";
import { startOpenAiServer, type OpenAiServer } from "./support/openai-server.js";

// Two instances of the service on one database (a PostgreSQL server: the embedded one is a process's own).
const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const env = { PF_AI_PROVIDER_HOSTS: "127.0.0.1", PF_AI_TEST_KEY: "sk-test", PF_JWT_PRIVATE_KEY: key };
let loopback: OpenAiServer;
const a = usePlatform({ services: ["ai"], env });
let b: TestPlatform | undefined;
beforeAll(async () => {
  loopback = await startOpenAiServer();
  if (!DATABASE_SERVER.skips)
    b = await startTestPlatform({
      services: ["ai"],
      env: {
        ...env,
        DATABASE_URL: a.platform.databaseUrl,
        ...(a.events ? { PF_NATS_NAMESPACE: a.events.namespace } : {}),
      },
    });
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await loopback.close();
});

const generate = async (t: TestPlatform) =>
  t.http("POST", "/ai/api/v1/generate", {
    token: await someone(a),
    body: { text: "Say hello.", model: "shared/m1", no_cache: true },
  });

describe("a breaker shared by every instance", () => {
  itWith(DATABASE_SERVER, "opens on one instance, refuses on the other, and lets exactly one trial go", async () => {
    const ops = await operator(a);
    await ops.provider("shared", loopback.url, {
      timeout_ms: 300,
      max_retries: 0,
      breaker_threshold: 2,
      breaker_open_ms: 1500,
    });
    loopback.script(() => ({ kind: "stall" }));
    for (let i = 0; i < 2; i++) expect((await generate(a)).body.run.failure.code).toBe("ai.provider_timeout");
    expect((await ops.breaker("shared")).state).toBe("open");

    const seen = loopback.received.length;
    const refused = await generate(b!);
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe("ai.provider_unavailable");
    expect(loopback.received.length).toBe(seen);

    // Due again: both instances ask at once; one trial goes, the other is refused while it runs.
    // The trial's answer is held (within a longer time limit) until the other instance was refused: the trial still
    // runs when the other instance asks.
    await ops.call("PATCH", "/providers/shared", { timeout_ms: 5000 });
    let release!: () => void;
    const refusedElsewhere = new Promise<void>((resolve) => (release = resolve));
    loopback.enqueue({ kind: "stall", until: refusedElsewhere, then: { kind: "answer", content: "Back." } });
    loopback.script(() => ({ kind: "answer", content: "Back." }));
    const opened = await ops.breaker("shared");
    await until(() => Date.now() > Date.parse(opened.reopens_at), 5_000);
    const [first, second] = await Promise.all(
      [a, b!].map(async (instance) => {
        const answer = await generate(instance);
        if (answer.status === 503) release();
        return answer;
      }),
    );
    expect([first.status, second.status].sort()).toEqual([200, 503]);
    expect(loopback.received.length).toBe(seen + 1);
    expect((await ops.breaker("shared")).state).toBe("closed");
    expect((await generate(b!)).body.run.state).toBe("succeeded");
  });
});

describe("a cache shared by every instance", () => {
  itWith(
    DATABASE_SERVER,
    "answers on one instance what another cached, and a purge on either empties it for both",
    async () => {
      const token = await someone(a);
      const body = {
        text: "Chip demand grew. Supply stayed tight. Prices rose for a third month.",
        namespace: "shared",
      };
      const first = await a.http("POST", "/ai/api/v1/summarize", { token, body });
      expect(first.body.run).toMatchObject({ state: "succeeded", cache_hit: false });
      const elsewhere = await b!.http("POST", "/ai/api/v1/summarize", { token, body });
      expect(elsewhere.body.run).toMatchObject({ state: "succeeded", cache_hit: true });
      expect(elsewhere.body.run.output.text).toBe(first.body.run.output.text);

      const ops = await operator(a);
      const purged = await ops.call("DELETE", "/cache?namespace=shared");
      expect(purged.purged).toBe(1);
      const after = await b!.http("POST", "/ai/api/v1/summarize", { token, body });
      expect(after.body.run.cache_hit).toBe(false);
    },
  );
});
