import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { claimRun } from "../../services/sources/db/runs.js";
import { applyOutcome } from "../../services/sources/workers/apply.js";
import { reapLapsed } from "../../services/sources/workers/reaper.js";
import { reportStale, scheduleDue } from "../../services/sources/workers/scheduler.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { entry, runWith, succeeded } from "./fetched.js";
import {
  afterFirstSchedulerPass,
  ALL_SOURCES,
  caller,
  fetchedSource,
  manualSource,
  QUIET_WORKERS,
  sourcesOf,
} from "./support.js";

const clock = new ManualClock(new Date("2026-06-01T12:00:00Z"));
const t = usePlatform({ services: ["sources"], clock, env: { ...QUIET_WORKERS, PF_SOURCES_RUN_LEASE_MS: "60000" } });
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
  call = caller(t, () => news);
  await afterFirstSchedulerPass(t);
});

const runOf = async (key: string, id: string) =>
  (await call("GET", `/sources/${key}/runs`)).body.runs.runs.find((run: { id: string }) => run.id === id);

describe("manual trigger", () => {
  it("answers 202 with the queued run; while it is queued or running, a trigger answers that same run", async () => {
    const key = await fetchedSource(call);
    const first = await call("POST", `/sources/${key}/fetch`, {});
    expect(first.status).toBe(202);
    expect(first.body.run).toMatchObject({
      source_key: key,
      state: "RUN_STATE_QUEUED",
      trigger: "RUN_TRIGGER_MANUAL",
      items_new: 0,
    });
    expect(first.body.run.id).toMatch(/^run_/);
    const again = await call("POST", `/sources/${key}/fetch`, {});
    expect(again.status).toBe(202);
    expect(again.body.run.id).toBe(first.body.run.id);
    const ctx = sourcesOf(t);
    clock.advance(1_000);
    await ctx.transaction((em) => claimRun(em, "w1", ctx.clock.now(), 60_000, 1_000, key));
    const running = await call("POST", `/sources/${key}/fetch`, {});
    expect(running.body.run).toMatchObject({ id: first.body.run.id, state: "RUN_STATE_RUNNING" });
  });

  it("409 source.disabled for a disabled source, 409 source.not_fetched for a manual one", async () => {
    const key = await fetchedSource(call);
    await call("PATCH", `/sources/${key}`, { enabled: false });
    expect((await call("POST", `/sources/${key}/fetch`, {})).body).toMatchObject({
      status: 409,
      code: "source.disabled",
    });
    const manual = await manualSource(call);
    expect((await call("POST", `/sources/${manual}/fetch`, {})).body).toMatchObject({
      status: 409,
      code: "source.not_fetched",
    });
  });

  it("a failed run keeps its class; the source's health counts consecutive failures until a success", async () => {
    const key = await fetchedSource(call);
    const failed = {
      state: "failed",
      failureClass: "http_status",
      httpStatus: 503,
      detail: "503 from origin",
    } as const;
    const a = await runWith(t, call, key, failed);
    await runWith(t, call, key, failed);
    expect(await runOf(key, a)).toMatchObject({
      state: "RUN_STATE_FAILED",
      failure_class: "FAILURE_CLASS_HTTP_STATUS",
      failure_detail: "503 from origin",
      http_status: 503,
    });
    let source = (await call("GET", `/sources/${key}`)).body.source;
    expect(source.health).toMatchObject({
      consecutive_failures: 2,
      last_failure_class: "FAILURE_CLASS_HTTP_STATUS",
      staleness: "STALENESS_NEVER_FETCHED",
    });
    const ok = await runWith(t, call, key, { state: "not_modified", httpStatus: 304 });
    expect(await runOf(key, ok)).toMatchObject({ state: "RUN_STATE_NOT_MODIFIED", http_status: 304 });
    source = (await call("GET", `/sources/${key}`)).body.source;
    expect(source.health).toMatchObject({ consecutive_failures: 0, staleness: "STALENESS_FRESH" });
    expect(source.health.last_failure_class).toBe("FAILURE_CLASS_UNSPECIFIED");
    const all = (await call("GET", `/runs?source_key=${key}&state=RUN_STATE_FAILED`)).body.runs.runs;
    expect(all).toHaveLength(2);
  });

  it("a failure's detail, however long, is cut, never the run's end refused: the run keeps its class", async () => {
    const key = await fetchedSource(call);
    const detail = `invalid XML at line 1: Expected closing tag '${"t".repeat(5000)}'`;
    const id = await runWith(t, call, key, { state: "failed", failureClass: "parse_error", httpStatus: 200, detail });
    const run = await runOf(key, id);
    expect(run).toMatchObject({ state: "RUN_STATE_FAILED", failure_class: "FAILURE_CLASS_PARSE_ERROR" });
    expect(run.failure_detail).toBe(detail.slice(0, 500));
  });

  it("sources.run.finished tells every run's end with its state, class and counts", async () => {
    const key = await fetchedSource(call);
    const failedRun = await runWith(t, call, key, {
      state: "failed",
      failureClass: "timeout",
      detail: "no answer within 30000 ms",
    });
    const okRun = await runWith(t, call, key, succeeded([entry("https://f.example/1")]));
    const finished = (await outboxEvents(t, "sources", key))
      .filter((event) => event.subject === "sources.run.finished")
      .map((event) => JSON.parse(event.payload).run);
    expect(finished).toMatchObject([
      { id: failedRun, source_key: key, state: "RUN_STATE_FAILED", failure_class: "FAILURE_CLASS_TIMEOUT" },
      { id: okRun, source_key: key, state: "RUN_STATE_SUCCEEDED", items_new: 1 },
    ]);
  });

  it("429 rate.limited past PF_SOURCES_TRIGGERS_PER_MINUTE; a trigger answering the active run counts none", async () => {
    const settings = sourcesOf(t).settings;
    const before = settings.fetchTriggersPerMinute;
    settings.fetchTriggersPerMinute = 1;
    try {
      // Every call at one instant, in one window; the source's host is its own (no turn to wait for).
      const key = await fetchedSource(call);
      const first = await call("POST", `/sources/${key}/fetch`, {});
      expect(first.status).toBe(202);
      // The run is active: answered, whatever the limit.
      expect((await call("POST", `/sources/${key}/fetch`, {})).body.run.id).toBe(first.body.run.id);
      const ctx = sourcesOf(t);
      const claimed = await ctx.transaction((em) => claimRun(em, "w-rate", ctx.clock.now(), 60_000, 1_000, key));
      await applyOutcome(ctx, claimed!, "w-rate", { state: "not_modified", httpStatus: 304 }, clock.now());
      const limited = await call("POST", `/sources/${key}/fetch`, {});
      expect(limited.body).toMatchObject({ status: 429, code: "rate.limited" });
    } finally {
      settings.fetchTriggersPerMinute = before;
    }
  });

  it("filters refuse values no state or kind has (400 naming the field)", async () => {
    const key = await fetchedSource(call);
    const cases: [string, string][] = [
      [`/sources/${key}/runs?state=7`, "state"],
      ["/runs?state=42", "state"],
      ["/sources?kind=99", "kind"],
    ];
    for (const [path, field] of cases)
      expect((await call("GET", path)).body, path).toMatchObject({ status: 400, code: "request.invalid", field });
  });

  it("pages runs newest first with a cursor; a forged cursor is 400", async () => {
    const key = await fetchedSource(call);
    const ids = [];
    for (let n = 0; n < 3; n++) ids.push(await runWith(t, call, key, { state: "not_modified", httpStatus: 304 }));
    const first = (await call("GET", `/sources/${key}/runs?limit=2`)).body.runs;
    expect(first.runs.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    const second = (await call("GET", `/sources/${key}/runs?limit=2&cursor=${first.next_cursor}`)).body.runs;
    expect(second).toMatchObject({ runs: [{ id: ids[0] }], next_cursor: "" });
    const forged = await call("GET", `/runs?cursor=${Buffer.from('["x","y"]').toString("base64url")}`);
    expect(forged.body).toMatchObject({ status: 400, field: "cursor" });
  });
});

describe("health", () => {
  it("pages every source's health by key (limit 1-200, default 50, cursor); bad limits and cursors are 400", async () => {
    for (let n = 0; n < 3; n++) await manualSource(call);
    const seen: string[] = [];
    let cursor = "";
    do {
      const page = (await call("GET", `/health?limit=2${cursor === "" ? "" : `&cursor=${cursor}`}`)).body.health;
      expect(page.sources.length).toBeLessThanOrEqual(2);
      seen.push(...page.sources.map((s: { source_key: string }) => s.source_key));
      cursor = page.next_cursor;
    } while (cursor !== "");
    const all = (await call("GET", "/health?limit=200")).body.health.sources;
    expect(seen).toEqual(all.map((s: { source_key: string }) => s.source_key));
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const path of ["/health?limit=0", "/health?limit=201"])
      expect((await call("GET", path)).body, path).toMatchObject({ status: 400, field: "limit" });
    const forged = await call("GET", `/health?cursor=${Buffer.from("[7]").toString("base64url")}`);
    expect(forged.body).toMatchObject({ status: 400, field: "cursor" });
  });
});

describe("a run whose worker died", () => {
  it("ends failed/abandoned once its lease lapses; the worker coming back applies nothing", async () => {
    const ctx = sourcesOf(t);
    const key = await fetchedSource(call);
    const { id } = (await call("POST", `/sources/${key}/fetch`, {})).body.run;
    clock.advance(1_000);
    const claimed = await ctx.transaction((em) => claimRun(em, "dead-worker", ctx.clock.now(), 60_000, 1_000, key));
    expect(claimed?.id).toBe(id);
    expect(await runOf(key, id)).toMatchObject({ state: "RUN_STATE_RUNNING" });
    expect(await reapLapsed(ctx)).toBe(0);
    clock.advance(60_001);
    // Earlier tests' runs left running lapse too.
    expect(await reapLapsed(ctx)).toBeGreaterThanOrEqual(1);
    const run = await runOf(key, id);
    expect(run).toMatchObject({ state: "RUN_STATE_FAILED", failure_class: "FAILURE_CLASS_ABANDONED" });
    expect(new Date(run.finished_at)).toEqual(clock.now());
    expect((await call("GET", `/sources/${key}`)).body.source.health).toMatchObject({
      consecutive_failures: 1,
      last_failure_class: "FAILURE_CLASS_ABANDONED",
    });
    const late = await applyOutcome(
      ctx,
      claimed!,
      "dead-worker",
      succeeded([entry("https://d.example/1")]),
      clock.now(),
    );
    expect(late).toBe(false);
    expect((await call("GET", `/items?source_key=${key}&include_removed=1`)).body.items.items).toEqual([]);
    expect(await runOf(key, id)).toMatchObject({ state: "RUN_STATE_FAILED", items_new: 0 });
    // The source takes a new run: nothing is left running.
    const next = await call("POST", `/sources/${key}/fetch`, {});
    expect(next.body.run).toMatchObject({ state: "RUN_STATE_QUEUED" });
    expect(next.body.run.id).not.toBe(id);
  });
});

describe("the scheduler", () => {
  it("queues a scheduled run for enabled fetched sources by their interval, never two at once", async () => {
    const ctx = sourcesOf(t);
    const key = await fetchedSource(call, { fetch_interval_seconds: 120 });
    const disabled = await fetchedSource(call);
    await call("PATCH", `/sources/${disabled}`, { enabled: false });
    await scheduleDue(ctx);
    const [queued] = (await call("GET", `/sources/${key}/runs`)).body.runs.runs;
    expect(queued).toMatchObject({ state: "RUN_STATE_QUEUED", trigger: "RUN_TRIGGER_SCHEDULE" });
    expect((await call("GET", `/sources/${disabled}/runs`)).body.runs.runs).toEqual([]);
    clock.advance(120_000);
    await scheduleDue(ctx);
    expect((await call("GET", `/sources/${key}/runs`)).body.runs.runs).toHaveLength(1);
    // Run it; one interval later the next is due.
    clock.advance(1_000);
    const claimed = await ctx.transaction((em) => claimRun(em, "w", ctx.clock.now(), 60_000, 1_000, key));
    await applyOutcome(ctx, claimed!, "w", { state: "not_modified", httpStatus: 304 }, clock.now());
    await scheduleDue(ctx);
    expect((await call("GET", `/sources/${key}/runs`)).body.runs.runs).toHaveLength(1);
    clock.advance(120_000);
    await scheduleDue(ctx);
    const runs = (await call("GET", `/sources/${key}/runs`)).body.runs.runs;
    expect(runs.map((r: { state: string }) => r.state)).toEqual(["RUN_STATE_QUEUED", "RUN_STATE_NOT_MODIFIED"]);
  });
});

describe("staleness told downstream", () => {
  it("sources.source.changed (stale) once per crossing of three intervals since the last success", async () => {
    const ctx = sourcesOf(t);
    const key = await fetchedSource(call, { fetch_interval_seconds: 60 });
    const staleEvents = async () =>
      (await outboxEvents(t, "sources", `"key":"${key}"`)).filter(
        (event) => event.subject === "sources.source.changed" && JSON.parse(event.payload).change === "stale",
      );
    await reportStale(ctx);
    // Never fetched is not a crossing.
    expect(await staleEvents()).toHaveLength(0);
    await runWith(t, call, key, { state: "not_modified", httpStatus: 304 });
    clock.advance(3 * 60_000);
    await reportStale(ctx);
    expect(await staleEvents()).toHaveLength(0);
    clock.advance(1_000);
    await reportStale(ctx);
    await reportStale(ctx);
    const [told] = await staleEvents();
    expect(await staleEvents()).toHaveLength(1);
    expect(JSON.parse(told.payload).source).toMatchObject({ key, health: { staleness: "STALENESS_STALE" } });
    await runWith(t, call, key, { state: "not_modified", httpStatus: 304 });
    clock.advance(3 * 60_000 + 1_000);
    await reportStale(ctx);
    expect(await staleEvents()).toHaveLength(2);
  });
});
