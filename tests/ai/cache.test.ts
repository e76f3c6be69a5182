import { describe, expect, it } from "vitest";
import type { AiContext } from "../../services/ai/context.js";
import { cachedAnswer, storeAnswer } from "../../services/ai/db/cache.js";
import { cacheKeyOf } from "../../services/ai/domain/cache-key.js";
import type { ProviderAnswer } from "../../services/ai/providers/provider.js";
import { sweepAi } from "../../services/ai/workers/sweep.js";
import { sql } from "../../services/kit/db/sql.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";

const clock = new ManualClock(new Date("2027-04-01T10:00:00Z"));
const t = usePlatform({
  services: ["ai"],
  clock,
  env: { PF_AI_CACHE_TTL_SECONDS: "60", PF_AI_REQUEST_LOG_DAYS: "2" },
});
const ctx = () => t.platform.contexts.get("ai") as AiContext;
const db = () => ctx().orm.em.fork();

const manager = () => t.token({ kind: "service", sub: "svc:ops", caps: ["ai.provider.manage"] });
const reader = () => t.token({ kind: "service", sub: "svc:dash", caps: ["ai.usage.read"] });
const stats = async () => (await t.http("GET", "/ai/api/v1/cache", { token: await reader() })).body.cache;
const purge = async (query = "") => t.http("DELETE", `/ai/api/v1/cache${query}`, { token: await manager() });

const answer = (text: string): ProviderAnswer => ({
  text,
  citations: [],
  usage: { inputTokens: 3, outputTokens: 4 },
  stub: true,
});
const store = (key: string, namespace: string, operation = "summarize", model = "extractive") =>
  storeAnswer(ctx(), key, { namespace, operation, provider: "local", model, answer: answer(key) });

describe("the cache key", () => {
  const base = {
    namespace: "trade",
    operation: "summarize",
    provider: "local",
    model: "extractive",
    definitions: "workflow:trade.summarize_market_context@1,prompt:trade.summarize_market_context@1,route:default@1",
    request: { variables: { symbol: "ACME", depth: 2 }, documents: [{ id: "d1", text: "up" }] },
  };

  it("is the same for the same call whatever the order of its members, and hex sha256", () => {
    const reordered = {
      request: { documents: [{ text: "up", id: "d1" }], variables: { depth: 2, symbol: "ACME" }, none: undefined },
      definitions: base.definitions,
      model: "extractive",
      provider: "local",
      operation: "summarize",
      namespace: "trade",
    };
    expect(cacheKeyOf(reordered)).toBe(cacheKeyOf(base));
    expect(cacheKeyOf(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("separates namespaces, operations, providers, models, definition versions and requests", () => {
    const keys = [
      base,
      { ...base, namespace: "reviews" },
      { ...base, operation: "generate" },
      { ...base, provider: "openai" },
      { ...base, model: "hash-embed" },
      { ...base, definitions: base.definitions.replace("route:default@1", "route:default@2") },
      { ...base, request: { ...base.request, variables: { symbol: "ACME", depth: 3 } } },
      { ...base, request: { ...base.request, documents: [{ id: "d1", text: "down" }] } },
    ].map(cacheKeyOf);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("the answer cache in PostgreSQL", () => {
  it("answers what was stored until it expires, counting each hit on its entry", async () => {
    await store("k-trade", "trade");
    expect(await cachedAnswer(ctx(), "k-trade")).toEqual(answer("k-trade"));
    expect(await cachedAnswer(ctx(), "k-trade")).toEqual(answer("k-trade"));
    expect(await cachedAnswer(ctx(), "k-other")).toBeUndefined();
    const [entry] = await sql<{ hits: number }>(db(), `select hits from {cache_entries} where key = ?`, ["k-trade"]);
    expect(entry.hits).toBe(2);
    clock.advance(60_000);
    expect(await cachedAnswer(ctx(), "k-trade")).toBeUndefined();
    // Stored again (a later call answered it), it lives another TTL.
    await store("k-trade", "trade");
    expect(await cachedAnswer(ctx(), "k-trade")).toEqual(answer("k-trade"));
  });

  it("shows entries, bytes, the TTL and hits and misses of the runs that looked it up", async () => {
    const run = (id: string, lookup: boolean, hit: boolean) =>
      sql(
        db(),
        `insert into {runs} (id, operation, namespace, caller, state, request, cache_lookup, cache_hit, created_at)
         values (?, 'summarize', 'trade', 'svc:trade', 'succeeded', '{}', ?, ?, ?)`,
        [id, lookup, hit, clock.now()],
      );
    await run("run_a", true, true);
    await run("run_b", true, false);
    await run("run_c", true, false);
    await run("run_d", false, false);
    const cache = await stats();
    expect(cache).toMatchObject({ entries: 1, hits: "1", misses: "2", ttl_seconds: 60 });
    expect(Number(cache.bytes)).toBe(Buffer.byteLength(JSON.stringify(answer("k-trade"))));
    expect(cache.oldest).toBe(clock.now().toISOString().replace(".000Z", "Z"));
  });

  it("purges by namespace, operation or model, audited; purging everything restarts the hit and miss counts", async () => {
    await store("k-reviews", "reviews");
    await store("k-embed", "reviews", "embed", "hash-embed");
    await store("k-generate", "news", "generate");
    await store("k-news", "news");
    expect((await purge("?namespace=trade")).body).toMatchObject({ purged: 1 });
    expect((await purge("?operation=embed")).body).toMatchObject({ purged: 1 });
    expect((await purge("?namespace=news&operation=generate")).body).toMatchObject({ purged: 1 });
    expect((await purge("?model=local/hash-embed")).body).toMatchObject({ purged: 0 });
    expect((await stats()).entries).toBe(2);
    clock.advance(1_000);
    expect((await purge()).body).toMatchObject({ purged: 2 });
    expect(await stats()).toMatchObject({ entries: 0, bytes: "0", hits: "0", misses: "0" });
    const audit = await sql<{ actor: string; action: string; after: { purged: number } }>(
      db(),
      `select actor, action, after from {audit_log} where target_kind = 'cache' order by at, id`,
    );
    expect(audit.map((entry) => [entry.actor, entry.action, entry.after.purged])).toEqual([
      ["svc:ops", "cache.purged", 1],
      ["svc:ops", "cache.purged", 1],
      ["svc:ops", "cache.purged", 1],
      ["svc:ops", "cache.purged", 0],
      ["svc:ops", "cache.purged", 2],
    ]);
  });

  it("refuses a bad filter by its field, and tokens without the capability", async () => {
    const bad = await purge("?operation=dance");
    expect([bad.status, bad.body.code, bad.body.field]).toEqual([400, "request.invalid", "operation"]);
    const model = await purge("?model=extractive");
    expect([model.status, model.body.field]).toEqual([400, "model"]);
    expect((await t.http("DELETE", "/ai/api/v1/cache", { token: await reader() })).status).toBe(403);
    expect((await t.http("GET", "/ai/api/v1/cache", { token: await manager() })).status).toBe(403);
    expect((await t.http("GET", "/ai/api/v1/cache")).status).toBe(401);
  });
});

describe("the sweep", () => {
  it("removes expired entries and request logs past PF_AI_REQUEST_LOG_DAYS, and keeps the rest", async () => {
    await store("k-old", "trade");
    clock.advance(30_000);
    await store("k-new", "trade");
    const log = (id: string, at: Date) =>
      sql(
        db(),
        `insert into {request_logs} (id, run_id, caller, namespace, operation, provider, model, outcome, at)
         values (?, 'run_x', 'svc:trade', 'trade', 'summarize', 'local', 'extractive', 'ok', ?)`,
        [id, at],
      );
    clock.advance(30_000);
    const now = clock.now().getTime();
    await log("arq_old", new Date(now - 2 * 86_400_000 - 1));
    await log("arq_new", new Date(now - 2 * 86_400_000 + 1));
    await sweepAi(ctx());
    const keys = await sql<{ key: string }>(db(), `select key from {cache_entries}`);
    expect(keys.map((row) => row.key)).toEqual(["k-new"]);
    const logs = await sql<{ id: string }>(db(), `select id from {request_logs}`);
    expect(logs.map((row) => row.id)).toEqual(["arq_new"]);
  });
});
