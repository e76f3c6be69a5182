import { beforeAll, describe, expect, it } from "vitest";
import type { AiContext } from "../../services/ai/context.js";
import { sql } from "../../services/kit/db/sql.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";

const clock = new ManualClock(new Date("2027-04-01T10:05:00Z"));
const t = usePlatform({ services: ["ai"], clock });
const ctx = () => t.platform.contexts.get("ai") as AiContext;

interface Run {
  id: string;
  usage: { input_tokens?: number; output_tokens?: number };
}

/** The prices set on local/extractive, micro-USD per 1,000 tokens. */
const IN_PRICE = 1500n;
const OUT_PRICE = 2500n;
/** Tokens × prices / 1000, rounded half up, in integers. */
const cost = (input: number, output: number) =>
  String((BigInt(input) * IN_PRICE + BigInt(output) * OUT_PRICE + 500n) / 1000n);
const tokens = (runs: Run[]) => ({
  input: runs.reduce((sum, run) => sum + (run.usage.input_tokens ?? 0), 0),
  output: runs.reduce((sum, run) => sum + (run.usage.output_tokens ?? 0), 0),
});

let reader: string;
/** The runs made, oldest first: a workflow run and a summary by trade, a summary by news, and a failed news run. */
const runs: Run[] = [];
const FAILED = "air_failedbyhandxxxxxxxxxxx";

const read = async (path: string) => {
  const answer = await t.http("GET", `/ai/api/v1${path}`, { token: reader });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
};

/** Every item of a paged read, page by page with `limit`, and how many pages it took. */
async function allPages(path: string, field: string, limit: number): Promise<{ items: unknown[]; pages: number }> {
  const items: unknown[] = [];
  let cursor = "";
  let pages = 0;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const body = await read(`${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    items.push(...body[field]);
    cursor = body.next_cursor ?? "";
    pages++;
  } while (cursor !== "" && pages < 20);
  return { items, pages };
}

beforeAll(async () => {
  reader = await t.token({ kind: "service", svc: "ops", caps: ["ai.usage.read", "ai.provider.manage"] });
  const priced = await t.http("PATCH", "/ai/api/v1/models/local/extractive", {
    token: reader,
    body: { input_micros_per_1k: Number(IN_PRICE), output_micros_per_1k: Number(OUT_PRICE) },
  });
  expect(priced.status).toBe(200);
  const trade = await t.token({ kind: "service", svc: "trade", caps: ["ai.run.create"], ns: ["trade"] });
  const news = await t.token({ kind: "service", svc: "news", caps: ["ai.run.create"], ns: ["news"] });
  const create = async (token: string, path: string, body: object) => {
    const answer = await t.http("POST", `/ai/api/v1${path}`, { token, body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    runs.push(answer.body.run);
  };
  await create(trade, "/runs", {
    workflow: "trade.summarize_market_context",
    variables: { symbol: "ACME" },
    documents: [{ id: "d1", text: "ACME rose 5% on Monday after earnings. Analysts were surprised by revenue." }],
  });
  clock.set(new Date("2027-04-01T10:40:00Z"));
  await create(news, "/summarize", { text: "The council met on Tuesday. It approved the new budget. Many spoke." });
  clock.set(new Date("2027-04-01T11:10:00Z"));
  await create(trade, "/summarize", { text: "Markets were calm. Volumes were thin. Nothing moved much at all." });
  // A failed run of one input token: 1.5 micro-USD, rounded half up to 2.
  await sql(
    ctx().orm.em.fork(),
    `insert into {runs} (id, operation, namespace, caller, state, request, provider, model, input_tokens,
       output_tokens, failure_code, created_at, ended_at)
     values (?, 'summarize', 'news', 'svc:news', 'failed', '{}', 'local', 'extractive', 1, 0, 'ai.provider_failed',
       '2027-04-01T11:20:00Z', '2027-04-01T11:20:01Z')`,
    [FAILED],
  );
  runs.push({ id: FAILED, usage: { input_tokens: 1, output_tokens: 0 } });
  clock.set(new Date("2027-04-01T11:30:00Z"));
});

const ids = (items: unknown[]) => (items as { id: string }[]).map((item) => item.id);

describe("runs", () => {
  it("lists any caller's runs newest first, with each filter", async () => {
    const [workflow, newsSummary, tradeSummary, failed] = runs.map((run) => run.id);
    expect(ids((await read("/runs")).runs)).toEqual([failed, tradeSummary, newsSummary, workflow]);
    expect(ids((await read("/runs?namespace=news")).runs)).toEqual([failed, newsSummary]);
    expect(ids((await read("/runs?caller=svc:trade")).runs)).toEqual([tradeSummary, workflow]);
    expect(ids((await read("/runs?operation=workflow")).runs)).toEqual([workflow]);
    expect(ids((await read("/runs?workflow=trade.summarize_market_context")).runs)).toEqual([workflow]);
    expect(ids((await read("/runs?state=failed")).runs)).toEqual([failed]);
    const span = await read("/runs?since=2027-04-01T10:30:00Z&until=2027-04-01T11:20:00Z");
    expect(ids(span.runs)).toEqual([tradeSummary, newsSummary]);
    const first = (await read("/runs?operation=workflow")).runs[0];
    expect(first).toMatchObject({ workflow: "trade.summarize_market_context", namespace: "trade", stub: true });
  });

  it("pages through every run once, and refuses a cursor it did not issue or an empty span", async () => {
    const { items, pages } = await allPages("/runs", "runs", 1);
    expect(ids(items)).toEqual(ids((await read("/runs")).runs));
    expect(pages).toBe(4);
    const forged = await t.http("GET", "/ai/api/v1/runs?cursor=bm9wZQ", { token: reader });
    expect([forged.status, forged.body.field]).toEqual([400, "cursor"]);
    const backwards = await t.http("GET", "/ai/api/v1/runs?since=2027-04-02T00:00:00Z&until=2027-04-01T00:00:00Z", {
      token: reader,
    });
    expect([backwards.status, backwards.body.field]).toEqual([400, "until"]);
  });
});

describe("usage totals", () => {
  it("totals runs per hour, namespace, caller and model, newest first, with integer costs", async () => {
    const [workflow, newsSummary, tradeSummary, failed] = runs;
    const total = (window: string, namespace: string, caller: string, group: Run[], failures = 0) => {
      const sums = tokens(group);
      return {
        window_start: window,
        namespace,
        caller,
        provider: "local",
        model: "extractive",
        runs: group.length,
        failed: failures,
        cache_hits: 0,
        input_tokens: sums.input,
        output_tokens: sums.output,
        cost_micros: cost(sums.input, sums.output),
      };
    };
    const usage = (await read("/usage")).usage;
    expect(usage).toEqual([
      total("2027-04-01T11:00:00Z", "news", "svc:news", [failed!], 1),
      total("2027-04-01T11:00:00Z", "trade", "svc:trade", [tradeSummary!]),
      total("2027-04-01T10:00:00Z", "news", "svc:news", [newsSummary!]),
      total("2027-04-01T10:00:00Z", "trade", "svc:trade", [workflow!]),
    ]);
    expect(usage[0].cost_micros).toBe("2");

    const days = (await read("/usage?window=day")).usage;
    expect(days).toEqual([
      total("2027-04-01T00:00:00Z", "news", "svc:news", [newsSummary!, failed!], 1),
      total("2027-04-01T00:00:00Z", "trade", "svc:trade", [workflow!, tradeSummary!]),
    ]);
    expect((await read("/usage?namespace=trade&window=day")).usage).toEqual([days[1]]);
    expect((await read("/usage?caller=svc:news&since=2027-04-01T11:00:00Z")).usage).toEqual([usage[0]]);
    expect((await read("/usage?provider=local&model=extractive")).usage).toHaveLength(4);
    expect((await read("/usage?provider=openai")).usage ?? []).toEqual([]);
    // The last day by default: nothing before it.
    clock.set(new Date("2027-04-02T11:15:00Z"));
    expect((await read("/usage")).usage).toEqual([usage[0]]);
    clock.set(new Date("2027-04-01T11:30:00Z"));

    const { items, pages } = await allPages("/usage", "usage", 1);
    expect(items).toEqual(usage);
    expect(pages).toBe(4);
  });

  it("summarises the last day: runs by state, tokens, cost, providers, breakers, definitions and routes", async () => {
    const sums = tokens(runs);
    const summary = (await read("/summary")).summary;
    expect(summary).toMatchObject({
      runs_succeeded: 3,
      runs_failed: 1,
      input_tokens: sums.input,
      output_tokens: sums.output,
      cost_micros: cost(sums.input, sums.output),
      providers_enabled: 1,
      definitions_active: 13,
      since: "2027-03-31T11:30:00Z",
    });
    expect(summary.breakers_open ?? []).toEqual([]);

    const em = ctx().orm.em.fork();
    await sql(em, `update {providers} set breaker_state = 'open' where key = 'local'`);
    await sql(em, `update {definitions} set status = 'disabled' where kind = 'route' and key = 'default'`);
    try {
      const changed = (await read("/summary")).summary;
      expect(changed).toMatchObject({ breakers_open: ["local"], routes_disabled: ["default"] });
    } finally {
      await sql(em, `update {providers} set breaker_state = 'closed' where key = 'local'`);
      await sql(em, `update {definitions} set status = 'active' where kind = 'route' and key = 'default'`);
    }
  });
});

describe("request log and audit log", () => {
  it("lists each provider call newest first, filtered and paged", async () => {
    const requests = (await read("/requests")).requests;
    expect(requests.map((request: { run_id: string }) => request.run_id)).toEqual(
      runs
        .slice(0, 3)
        .map((run) => run.id)
        .reverse(),
    );
    expect(requests[0]).toMatchObject({ provider: "local", model: "extractive", outcome: "ok", caller: "svc:trade" });
    expect((await read("/requests?namespace=news")).requests).toEqual([requests[1]]);
    expect((await read("/requests?caller=svc:trade&provider=local&model=extractive")).requests).toEqual([
      requests[0],
      requests[2],
    ]);
    expect((await read("/requests?until=2027-04-01T10:30:00Z")).requests).toEqual([requests[2]]);
    const { items, pages } = await allPages("/requests", "requests", 2);
    expect(items).toEqual(requests);
    expect(pages).toBe(2);
  });

  it("lists changes newest first, filtered by target and time, and paged", async () => {
    for (const key of ["alpha", "beta"]) {
      clock.advance(1_000);
      const created = await t.http("POST", "/ai/api/v1/providers", { token: reader, body: { key, kind: "local" } });
      expect(created.status).toBe(201);
    }
    const audit = (await read("/audit")).audit;
    expect(audit.map((entry: { action: string; target_key: string }) => `${entry.action} ${entry.target_key}`)).toEqual(
      ["provider.registered beta", "provider.registered alpha", "model.updated local/extractive"],
    );
    expect(audit[2]).toMatchObject({
      actor: "svc:ops",
      target_kind: "model",
      before: { input_micros_per_1k: 0 },
      after: { input_micros_per_1k: 1500, output_micros_per_1k: 2500 },
    });
    expect((await read("/audit?target_kind=provider")).audit).toEqual(audit.slice(0, 2));
    expect((await read("/audit?target_kind=provider&target_key=alpha")).audit).toEqual([audit[1]]);
    expect((await read("/audit?since=2027-04-01T11:30:01Z&until=2027-04-01T11:30:02Z")).audit).toEqual([audit[1]]);
    const { items, pages } = await allPages("/audit", "audit", 1);
    expect(items).toEqual(audit);
    expect(pages).toBe(3);
  });
});

describe("who may read usage", () => {
  it("refuses user and app tokens on these internal routes, and a service without ai.usage.read", async () => {
    const user = await t.token({ kind: "user", sub: "usr_01hzzzzzzzzzzzzzzzzzzzzzzz" });
    const app = await t.token({ kind: "app", app_id: "console", caps: ["ai.usage.read"] });
    const service = await t.token({ kind: "service", svc: "trade", caps: ["ai.run.create"] });
    for (const path of ["/runs", "/usage", "/summary", "/audit", "/requests"]) {
      for (const token of [user, app, service]) {
        const refused = await t.http("GET", `/ai/api/v1${path}`, { token });
        expect(refused.status, path).toBe(403);
      }
      expect((await t.http("GET", `/ai/api/v1${path}`)).status, path).toBe(401);
    }
  });
});
