import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { beforeAll, describe, expect, it } from "vitest";
import { READING_DEADLINE_MS } from "../../services/kit/service/metrics.js";
import { modules } from "../../platform/registry.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, NATS } from "../support/skips.js";
import { until } from "../support/until.js";
import { actingFor, ALL_DEALS, person } from "../deals/support.js";

const t = usePlatform();
let as: ReturnType<typeof actingFor>;

beforeAll(async () => {
  const web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => web);
});

/** One sample of the exposition: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

async function scrape(): Promise<Sample[]> {
  const answer = await fetch(t.platform.metricsUrl!);
  expect(answer.status).toBe(200);
  expect(answer.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await answer.text());
}

function parse(text: string): Sample[] {
  return text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [, name, inside, value] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(inside ?? "").matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
      return { name, labels, value: Number(value) };
    });
}

/** The samples of `name` whose labels include `labels`. */
const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

/** The one value of `name` with exactly these labels (plus `le` for buckets), 0 when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string>): number {
  const found = find(samples, name, labels);
  expect(found.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return found[0]?.value ?? 0;
}

const DEALS = "pf.deals.v1.DealsService";

describe("GET /metrics on PF_METRICS_PORT", () => {
  it("is served on its own port, never by the public gateway", async () => {
    expect(t.platform.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(t.platform.metricsUrl!).port).not.toBe(new URL(t.gatewayUrl).port);
    expect((await fetch(`${t.gatewayUrl}/metrics`)).status).toBe(404);
    const other = new URL("/", t.platform.metricsUrl).href;
    expect((await fetch(other)).status).toBe(404);
    expect((await fetch(t.platform.metricsUrl!, { method: "POST" })).status).toBe(405);
  });

  it("counts and times every RPC by service, method and code", async () => {
    const before = await scrape();
    const owner = person();
    for (let i = 0; i < 3; i++) expect((await as("GET", "/watches", owner)).status).toBe(200);
    const missing = await as("POST", "/products/resolve", owner, { gtin: "0000040063813", create: false });
    expect(missing.body).toMatchObject({ status: 404, code: "product.not_found" });
    // Refused by the handler: a keyword watch without its keyword.
    const invalid = await as("POST", "/watches", owner, { kind: "WATCH_KIND_KEYWORD" });
    expect(invalid.body).toMatchObject({ status: 400, field: "keyword" });
    // Over gRPC on the RPC port, without a token: refused by the RPC's own admission.
    const grpc = createClient(DealsService, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    await expect(grpc.listWatches({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    const after = await scrape();

    const grew = (name: string, method: string, code: string) =>
      valueOf(after, name, { service: DEALS, method, code }) - valueOf(before, name, { service: DEALS, method, code });
    expect(grew("pf_rpc_server_calls_total", "ListWatches", "ok")).toBe(3);
    expect(grew("pf_rpc_server_calls_total", "ResolveProduct", "not_found")).toBe(1);
    expect(grew("pf_rpc_server_calls_total", "CreateWatch", "invalid_argument")).toBe(1);
    expect(grew("pf_rpc_server_calls_total", "ResolveProduct", "ok")).toBe(0);
    expect(grew("pf_rpc_server_calls_total", "ListWatches", "unauthenticated")).toBe(1);
    expect(grew("pf_rpc_server_duration_seconds_count", "ListWatches", "ok")).toBe(3);
    expect(grew("pf_rpc_server_duration_seconds_count", "ResolveProduct", "not_found")).toBe(1);

    const labels = { service: DEALS, method: "ListWatches", code: "ok" };
    expect(valueOf(after, "pf_rpc_server_duration_seconds_sum", labels)).toBeGreaterThan(0);
    const buckets = find(after, "pf_rpc_server_duration_seconds_bucket", labels);
    expect(buckets.at(-1)).toMatchObject({ labels: { le: "+Inf" } });
    expect(buckets.at(-1)!.value).toBe(valueOf(after, "pf_rpc_server_calls_total", labels));
    const counts = buckets.map((b) => b.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });

  it("reports every service's database pool (the process's one) and the process's event-loop lag", async () => {
    const pool = await t.platform.contexts.get("deals")!.orm.em.getConnection().getNativeClient();
    const samples = await scrape();
    for (const { key } of modules) {
      expect(valueOf(samples, "pf_db_pool_max", { service: key }), key).toBe(pool.options.max);
      expect(find(samples, "pf_db_pool_in_use", { service: key }), key).toHaveLength(1);
      expect(find(samples, "pf_db_pool_waiting", { service: key }), key).toHaveLength(1);
    }
    expect(find(samples, "nodejs_eventloop_lag_seconds")).toHaveLength(1);
    expect(find(samples, "nodejs_eventloop_lag_p99_seconds")).toHaveLength(1);
  });

  it("counts a pool's connections checked out and the callers waiting for one", async () => {
    const pool = await t.platform.contexts.get("deals")!.orm.em.getConnection().getNativeClient();
    const size = pool.options.max!;
    const held = await Promise.all(Array.from({ length: size }, () => pool.connect()));
    // One more caller waits: every connection of the pool (PF_DB_POOL) is held.
    const queued = pool.connect();
    try {
      const samples = await scrape();
      expect(valueOf(samples, "pf_db_pool_in_use", { service: "deals" })).toBe(size);
      expect(valueOf(samples, "pf_db_pool_waiting", { service: "deals" })).toBeGreaterThanOrEqual(1);
    } finally {
      for (const client of held) client.release();
      (await queued).release();
    }
    await until(async () => valueOf(await scrape(), "pf_db_pool_waiting", { service: "deals" }) === 0);
  });
});

describe("the outbox gauges", () => {
  const outbox = `"deals".outbox`;
  const sql = (text: string) => t.platform.contexts.get("deals")!.orm.em.getConnection().execute(text);
  const backlog = (samples: Sample[]) => find(samples, "pf_outbox_backlog", { service: "deals" })[0]?.value;

  it("count the unsent events, and the age of the oldest, as the relay drains them", async () => {
    await until(async () => backlog(await scrape()) === 0);
    // An event waiting an hour for its next try holds the one after it (order is kept); one set aside is not counted.
    await sql(`insert into ${outbox} (id, subject, schema_id, payload, created_at, attempts, retry_at, failed_at) values
      ('evt_0metrics1', 'deals.metrics.test', 'test', '{}', now() - interval '90 seconds', 1, now() + interval '1 hour', null),
      ('evt_0metrics2', 'deals.metrics.test', 'test', '{}', now() - interval '30 seconds', 0, null, null),
      ('evt_0metrics3', 'deals.metrics.test', 'test', '{}', now() - interval '600 seconds', 10, null, now())`);
    try {
      const held = await scrape();
      expect(backlog(held)).toBe(2);
      const oldest = find(held, "pf_outbox_oldest_age_seconds", { service: "deals" })[0].value;
      expect(oldest).toBeGreaterThanOrEqual(90);
      expect(oldest).toBeLessThan(600);
      expect(valueOf(held, "pf_outbox_oldest_age_seconds", { service: "tips" })).toBeLessThan(90);
    } finally {
      await sql(`delete from ${outbox} where id in ('evt_0metrics1', 'evt_0metrics3')`);
    }
    // The event no longer held is published on the relay's next pass.
    await until(async () => backlog(await scrape()) === 0);
    expect(find(await scrape(), "pf_outbox_oldest_age_seconds", { service: "deals" })[0].value).toBe(0);
  });

  describeWith(DATABASE_SERVER, "with a database that does not answer", () => {
    it("answers the scrape within its deadline, leaving out what it could not read", async () => {
      const holder = new pg.Client({ connectionString: t.platform.databaseUrl });
      await holder.connect();
      try {
        await holder.query("begin");
        await holder.query(`lock table ${outbox} in access exclusive mode`);
        const started = Date.now();
        const samples = await scrape();
        expect(Date.now() - started).toBeLessThan(READING_DEADLINE_MS + 1_500);
        expect(backlog(samples)).toBeUndefined();
        expect(find(samples, "pf_outbox_backlog", { service: "tips" })).toHaveLength(1);
        expect(find(samples, "pf_db_pool_max", { service: "deals" })).toHaveLength(1);
      } finally {
        await holder.query("rollback");
        await holder.end();
      }
      await until(async () => backlog(await scrape()) === 0);
    });
  });
});

describeWith(NATS, "consumer lag", () => {
  it("is reported for every durable consumer of every service", async () => {
    const samples = await scrape();
    const durables = modules.flatMap((m) =>
      (m.consumers ?? []).map((c) => ({ service: m.key, consumer: `${m.key}_${c.name}` })),
    );
    expect(durables.length).toBeGreaterThan(0);
    for (const labels of durables) {
      const [lag] = find(samples, "pf_consumer_lag", labels);
      expect(lag, JSON.stringify(labels)).toBeDefined();
      expect(lag.value).toBeGreaterThanOrEqual(0);
    }
  });

  it("counts the events a consumer has been sent and not yet applied", async () => {
    const labels = { service: "vip", consumer: "vip_entitlements" };
    const lag = async () => find(await scrape(), "pf_consumer_lag", labels)[0]?.value;
    await until(async () => (await lag()) === 0);
    // vip's inbox locked against writes: its consumer cannot record, so cannot acknowledge, what billing publishes.
    const em = t.platform.contexts.get("vip")!.orm.em.fork();
    await em.begin();
    try {
      await em.getConnection().execute(`lock table "vip".inbox in share mode`, [], "run", em.getTransactionContext());
      // Empty entitlement events: applied, they change nothing.
      await t.platform.contexts
        .get("billing")!
        .orm.em.getConnection()
        .execute(
          `insert into "billing".outbox (id, subject, schema_id, payload) values
           ('evt_0lag1', 'billing.entitlement.changed', 'pf.billing.v1.EntitlementChanged', '{}'),
           ('evt_0lag2', 'billing.entitlement.changed', 'pf.billing.v1.EntitlementChanged', '{}'),
           ('evt_0lag3', 'billing.entitlement.changed', 'pf.billing.v1.EntitlementChanged', '{}')`,
        );
      await until(async () => (await lag()) === 3);
    } finally {
      await em.rollback();
    }
    await until(async () => (await lag()) === 0);
  });
});
