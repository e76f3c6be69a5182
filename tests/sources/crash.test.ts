import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { executeQueued } from "../../services/sources/workers/executor.js";
import { CHILD_START_MS, startChildPlatform, type ChildPlatform } from "../support/child-platform.js";
import { fixtureServer, type Fixture } from "../support/http-fixture.js";
import { freePorts } from "../support/ports.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { describeWith, need } from "../support/skips.js";
import { FEEDS } from "../support/source-feeds.js";
import { until } from "../support/until.js";
import { ALL_SOURCES, caller, freshKey, NOTES, sourcesOf } from "./support.js";

const SERVERS = need(Boolean(process.env.DATABASE_URL), "a child process shares the database: DATABASE_URL");

// The sources service in a process of its own fetches from a site that does not answer; the process is killed
// (SIGKILL) mid-fetch. A second instance in the test's process (`observer`, same database) runs the reaper.
describeWith(SERVERS, "a fetch whose worker is killed", () => {
  let site: Fixture;
  let answering = false;
  const held: ServerResponse[] = [];
  let observer: TestPlatform;
  let child: ChildPlatform | undefined;
  let dataDir: string;

  beforeAll(async () => {
    site = await fixtureServer((request, response) => {
      if (request.url === "/feed.xml" && answering)
        return response.writeHead(200, { "content-type": FEEDS.rss.type }).end(FEEDS.rss.body);
      if (request.url === "/feed.xml") return void held.push(response);
      response.writeHead(404).end();
    });
    const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const shared = { PF_JWT_PRIVATE_KEY: key, PF_SEAL_KEY: "sources-crash-seal", PF_IP_HASH_KEY: "sources-crash-ip" };
    const outbound = { PF_FETCH_ALLOW_HOSTS: site.host, PF_FETCH_TIMEOUT_MS: "60000" };
    observer = await startTestPlatform({
      services: ["sources"],
      env: {
        ...shared,
        ...outbound,
        PF_SOURCES_EXECUTOR_EVERY_MS: "2000000000",
        PF_SOURCES_SCHEDULE_EVERY_MS: "2000000000",
        PF_SOURCES_REAPER_EVERY_MS: "200",
        PF_SOURCES_TRIGGERS_PER_MINUTE: "100",
      },
    });
    dataDir = await mkdtemp(join(tmpdir(), "pf-sources-crash-"));
    child = await startChildPlatform({
      ...shared,
      ...outbound,
      DATABASE_URL: observer.platform.databaseUrl!,
      // Its outbox relay shares the observer's NATS namespace, never the default one.
      ...(observer.events ? { PF_NATS_NAMESPACE: observer.events.namespace } : {}),
      PF_SERVICES: "sources",
      PF_HTTP_PORT: String((await freePorts(1))[0]),
      PF_RPC_PORT: "0",
      PF_DATA_DIR: dataDir,
      PF_SOURCES_EXECUTOR_EVERY_MS: "100",
      PF_SOURCES_RUN_LEASE_MS: "1500",
    });
  }, 60_000 + CHILD_START_MS);
  afterAll(async () => {
    await child?.stop();
    for (const response of held) response.destroy();
    await observer?.stop();
    await site?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("leaves no run running (failed/abandoned once its lease lapses) and, fetched again, no item duplicated", async () => {
    const news = await observer.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
    const call = caller(observer, () => news);
    const key = freshKey("crash");
    const body = { key, kind: "SOURCE_KIND_RSS", url: site.url("/feed.xml"), enabled: true, ...NOTES };
    expect((await call("POST", "/sources", body)).status).toBe(201);
    await call("POST", `/sources/${key}/fetch`, {});
    const runs = async () => (await call("GET", `/sources/${key}/runs`)).body.runs.runs;
    // The child's executor claimed the run and is waiting on the site.
    await until(() => held.length > 0);
    const [running] = await runs();
    expect(running.state).toBe("RUN_STATE_RUNNING");

    await child!.kill();
    child = undefined;
    await until(async () => (await runs())[0].state !== "RUN_STATE_RUNNING");
    expect((await runs())[0]).toMatchObject({
      id: running.id,
      state: "RUN_STATE_FAILED",
      failure_class: "FAILURE_CLASS_ABANDONED",
    });
    expect((await call("GET", `/items?source_key=${key}`)).body.items.items).toEqual([]);

    // The site answers now: fetched twice, each entry is one item.
    answering = true;
    const ctx = sourcesOf(observer);
    for (let n = 0; n < 2; n++) {
      await call("POST", `/sources/${key}/fetch`, {});
      await until(async () => (await executeQueued(ctx)) > 0);
    }
    const [second, first] = await runs();
    expect(first).toMatchObject({ state: "RUN_STATE_SUCCEEDED", items_new: FEEDS.rss.entries("").length });
    expect(second).toMatchObject({ state: "RUN_STATE_SUCCEEDED", items_new: 0, items_unchanged: first.items_new });
    const items = (await call("GET", `/items?source_key=${key}&include_removed=1`)).body.items.items;
    expect(items).toHaveLength(first.items_new);
  });
});
