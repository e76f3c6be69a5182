import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { scheduleDue } from "../../services/sources/workers/scheduler.js";
import { createTestDatabase, serverUrl } from "../support/database.js";
import { fixtureServer, type Fixture } from "../support/http-fixture.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { FEEDS } from "../support/source-feeds.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";
import { afterFirstSchedulerPass, ALL_SOURCES, caller, freshKey, NOTES, sourcesOf } from "../sources/support.js";

const ENDED = (run: { state: string } | undefined) =>
  run !== undefined && !["RUN_STATE_QUEUED", "RUN_STATE_RUNNING"].includes(run.state);

/** An origin answering robots.txt 404 and the feed, or holding the feed's requests unanswered while `holding`. */
async function origin(holding: () => boolean) {
  const held: ServerResponse[] = [];
  const site: Fixture = await fixtureServer((request, response) => {
    if (request.url !== "/feed.xml") return response.writeHead(404).end();
    if (holding()) return void held.push(response);
    response.writeHead(200, { "content-type": FEEDS.rss.type }).end(FEEDS.rss.body);
  });
  return { site, held };
}

/** A source of `site`'s feed, enabled (interval 60 s); answers its key. */
async function feedSource(call: ReturnType<typeof caller>, site: Fixture) {
  const key = freshKey("feed");
  const body = { key, kind: "SOURCE_KIND_RSS", url: site.url("/feed.xml"), enabled: true, ...NOTES };
  const answer = await call("POST", "/sources", { ...body, fetch_interval_seconds: 60 });
  if (answer.status !== 201) throw new Error(`create failed: ${JSON.stringify(answer.body)}`);
  return key;
}

/** The source's runs, newest first. */
const runsOf = async (call: ReturnType<typeof caller>, key: string) =>
  (await call("GET", `/sources/${key}/runs`)).body.runs.runs as any[];

// The executor as it runs (every 100 ms, default four fetches at once, hosts a second apart) with one origin that
// never answers (its fetch waits out a 10 s timeout) and one that does, on another host.
describe("a hanging origin beside a healthy one", () => {
  let hanging: Awaited<ReturnType<typeof origin>>;
  let healthy: Fixture;
  let t: TestPlatform;
  beforeAll(async () => {
    hanging = await origin(() => true);
    healthy = (await origin(() => false)).site;
    t = await startTestPlatform({
      services: ["sources"],
      env: {
        PF_FETCH_ALLOW_HOSTS: `${hanging.site.host},${healthy.host}`,
        PF_FETCH_TIMEOUT_MS: "10000",
        PF_SOURCES_EXECUTOR_EVERY_MS: "100",
        PF_SOURCES_SCHEDULE_EVERY_MS: "2000000000",
        PF_SOURCES_REAPER_EVERY_MS: "2000000000",
      },
    });
    await afterFirstSchedulerPass(t);
  });
  afterAll(async () => {
    // The hanging fetch ends (its connection reset) before the platform stops and waits for it.
    for (const response of hanging?.held ?? []) response.destroy();
    await t?.stop();
    await hanging?.site.close();
    await healthy?.close();
  });

  it("the healthy source's run starts within its host gap, while the hanging fetch still waits", async () => {
    const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
    const call = caller(t, () => news);
    const stuck = await feedSource(call, hanging.site);
    await call("POST", `/sources/${stuck}/fetch`, {});
    await until(() => hanging.held.length > 0);

    const key = await feedSource(call, healthy);
    const { id } = (await call("POST", `/sources/${key}/fetch`, {})).body.run;
    let run: any;
    await until(async () => ENDED((run = (await runsOf(call, key)).find((r) => r.id === id))));
    expect(run).toMatchObject({ state: "RUN_STATE_SUCCEEDED", items_new: FEEDS.rss.entries("").length });
    expect(Date.parse(run.started_at) - Date.parse(run.queued_at)).toBeLessThan(sourcesOf(t).settings.hostGapMs);
    expect((await runsOf(call, stuck))[0].state).toBe("RUN_STATE_RUNNING");
  });
});

// The platform reaches PostgreSQL only through a proxy the test cuts while a fetch is out, so the fetch's outcome
// meets an unreachable database. A server the platform reaches over TCP: the embedded one is a single session
// inside the process. The clock is the test's: a lease never lapses by itself, and the next turn comes when moved.
describeWith(DATABASE_SERVER, "the database unreachable when a run's outcome is applied", () => {
  const clock = new ManualClock(new Date("2026-06-01T12:00:00Z"));
  /** What the platform logs at warn and above, parsed. */
  const logged: { run?: string; msg: string }[] = [];
  let holding = true;
  let feed: Awaited<ReturnType<typeof origin>>;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let proxy: TcpProxy;
  let t: TestPlatform;
  beforeAll(async () => {
    feed = await origin(() => holding);
    database = await createTestDatabase(serverUrl()!);
    const url = new URL(database.url);
    proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
    await proxy.open();
    url.host = `127.0.0.1:${proxy.port}`;
    t = await startTestPlatform({
      services: ["sources"],
      clock,
      logger: createLogger("warn", { write: (line: string) => void logged.push(JSON.parse(line)) }),
      env: {
        DATABASE_URL: url.toString(),
        PF_FETCH_ALLOW_HOSTS: feed.site.host,
        PF_SOURCES_EXECUTOR_EVERY_MS: "100",
        PF_SOURCES_SCHEDULE_EVERY_MS: "2000000000",
        PF_SOURCES_REAPER_EVERY_MS: "2000000000",
      },
    });
    await afterFirstSchedulerPass(t);
  });
  afterAll(async () => {
    for (const response of feed?.held ?? []) response.destroy();
    await t?.stop();
    await proxy?.cut();
    await database?.drop();
    await feed?.site.close();
  });

  itWith(
    DATABASE_SERVER,
    "is applied once it is back: the run ends with its real outcome, the next turn comes",
    async () => {
      const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
      const call = caller(t, () => news);
      const ctx = sourcesOf(t);
      const key = await feedSource(call, feed.site);
      expect(await scheduleDue(ctx)).toBe(1);
      await until(() => feed.held.length > 0);
      const [running] = await runsOf(call, key);
      expect(running).toMatchObject({ state: "RUN_STATE_RUNNING", trigger: "RUN_TRIGGER_SCHEDULE" });

      // The database goes away while the fetch is out; the origin answers; applying its outcome fails.
      await proxy.cut();
      holding = false;
      feed.held[0].writeHead(200, { "content-type": FEEDS.rss.type }).end(FEEDS.rss.body);
      await until(() => logged.some((line) => line.run === running.id));
      await proxy.open();

      let run: any;
      // Bounded, so that what the run became is asserted below (before the fix it stayed running).
      await until(async () => ENDED((run = (await runsOf(call, key).catch(() => []))[0])), 10_000).catch(() => {});
      const entries = FEEDS.rss.entries("").length;
      expect(run).toMatchObject({ id: running.id, state: "RUN_STATE_SUCCEEDED", http_status: 200, items_new: entries });
      expect((await call("GET", `/items?source_key=${key}`)).body.items.items).toHaveLength(entries);
      expect((await call("GET", `/sources/${key}`)).body.source.health).toMatchObject({ consecutive_failures: 0 });
      // The log says what happened to it (not that its worker stopped).
      expect(logged.find((line) => line.run === running.id)?.msg).toMatch(/database unreachable/);

      // One interval later the source's next turn queues a run, and it runs.
      clock.advance(60_000);
      expect(await scheduleDue(ctx)).toBe(1);
      await until(async () => ENDED((await runsOf(call, key))[0]));
      const [next] = await runsOf(call, key);
      expect(next).toMatchObject({
        state: "RUN_STATE_SUCCEEDED",
        trigger: "RUN_TRIGGER_SCHEDULE",
        items_unchanged: entries,
      });
    },
  );
});
