import { createHash } from "node:crypto";
import { createGzip } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerResponse } from "node:http";
import { fixtureServer, type Fixture } from "../support/http-fixture.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { FEEDS, OVERSIZED } from "../support/source-feeds.js";
import { until } from "../support/until.js";
import { ALL_SOURCES, caller, freshKey, NOTES } from "./support.js";

const SECRET = `fixture-secret-${Date.now()}`;

// The executor as it runs (every 100 ms, claiming runs, fetching outside a transaction, applying in one) against a
// fixture site on 127.0.0.1, reachable only because the test allows its host:port (PF_FETCH_ALLOW_HOSTS).
let site: Fixture;
/** Another server on 127.0.0.1, not allowed: a redirect there must never connect. */
let inside: Fixture;
let t: TestPlatform;
let call: ReturnType<typeof caller>;

/** Writes 64 KiB chunks for as long as the client reads. */
function endless(response: ServerResponse) {
  response.writeHead(200, { "content-type": "application/rss+xml" });
  const chunk = Buffer.alloc(64 * 1024, 32);
  const more = () => {
    while (!response.destroyed && response.write(chunk));
  };
  response.on("drain", more);
  more();
}

/** 512 MiB of spaces, gzipped (about 500 KiB on the wire). */
function gzipBomb(response: ServerResponse) {
  response.writeHead(200, { "content-type": "application/rss+xml", "content-encoding": "gzip" });
  const gzip = createGzip();
  gzip.pipe(response);
  response.on("close", () => gzip.destroy());
  let left = 512;
  const spaces = Buffer.alloc(1024 * 1024, 32);
  const more = () => {
    while (left > 0 && !response.destroyed && gzip.write(spaces)) left--;
    if (left === 0) gzip.end();
  };
  gzip.on("drain", more);
  more();
}

beforeAll(async () => {
  inside = await fixtureServer((_request, response) => response.end("inside"));
  site = await fixtureServer((request, response) => {
    const path = request.url ?? "/";
    if (path === "/robots.txt") return response.end("User-agent: *\nDisallow: /private\n");
    if (path.startsWith("/feed.xml")) {
      if (request.headers["if-none-match"] === '"v1"') return response.writeHead(304).end();
      return response.writeHead(200, { "content-type": FEEDS.rss.type, etag: '"v1"' }).end(FEEDS.rss.body);
    }
    if (path === "/oversized.xml")
      return response.writeHead(200, { "content-type": OVERSIZED.type }).end(OVERSIZED.body);
    if (path === "/status-500") return response.writeHead(500).end("down");
    if (path === "/broken.xml")
      return response.writeHead(200, { "content-type": "application/rss+xml" }).end("<rss><channel><item>");
    if (path === "/to-private") return response.writeHead(302, { location: "http://10.0.0.1/feed.xml" }).end();
    if (path === "/to-loopback") return response.writeHead(302, { location: inside.url("/feed.xml") }).end();
    if (path === "/slow") return; // never answers
    if (path === "/endless") return endless(response);
    if (path === "/huge") return response.writeHead(200, { "content-length": String(5 * 1024 ** 3) }).write("<rss>");
    if (path === "/bomb") return gzipBomb(response);
    if (path === "/drop") return request.socket.destroy();
    if (path === "/bad.html")
      return response.writeHead(200, { "content-type": "text/html" }).end(Buffer.from([0x89, 0x50, 0x00, 0x1a]));
    if (path === "/long-tag")
      return response
        .writeHead(200, { "content-type": "application/rss+xml" })
        .end(`<rss><channel><${"t".repeat(2000)}></channel></rss>`);
    return response.writeHead(404).end();
  });
  t = await startTestPlatform({
    services: ["sources"],
    env: {
      PF_FETCH_ALLOW_HOSTS: site.host,
      PF_FETCH_TIMEOUT_MS: "2000",
      PF_FETCH_MAX_BYTES: String(1024 * 1024),
      PF_SOURCES_EXECUTOR_EVERY_MS: "100",
      PF_SOURCES_SCHEDULE_EVERY_MS: "2000000000",
      PF_SOURCES_TRIGGERS_PER_MINUTE: "100",
      PF_SOURCE_CRED_FIXTURE: SECRET,
    },
  });
  const news = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
  call = caller(t, () => news);
});
afterAll(async () => {
  await t?.stop();
  await site?.close();
  await inside?.close();
});

/** A source of the fixture site, enabled. */
async function siteSource(path: string, extra: Record<string, unknown> = {}) {
  const key = freshKey("site");
  const body = { key, kind: "SOURCE_KIND_RSS", url: site.url(path), enabled: true, ...NOTES, ...extra };
  const answer = await call("POST", "/sources", body);
  if (answer.status !== 201) throw new Error(`create failed: ${JSON.stringify(answer.body)}`);
  return key;
}

/** Triggers a fetch and waits for the executor to end its run; answers the run. */
async function fetched(key: string) {
  const { id } = (await call("POST", `/sources/${key}/fetch`, {})).body.run;
  let run: any;
  await until(async () => {
    run = (await call("GET", `/sources/${key}/runs`)).body.runs.runs.find((r: { id: string }) => r.id === id);
    return !["RUN_STATE_QUEUED", "RUN_STATE_RUNNING"].includes(run.state);
  });
  return run;
}

describe("the executor against a fixture site", () => {
  it("fetches, takes items with provenance, then answers not_modified to its conditional GET, a second apart", async () => {
    const key = await siteSource("/feed.xml");
    const first = await fetched(key);
    const entries = FEEDS.rss.entries(site.url("").replace(/\/$/, ""));
    expect(first).toMatchObject({ state: "RUN_STATE_SUCCEEDED", http_status: 200, items_new: entries.length });
    const items = (await call("GET", `/items?source_key=${key}`)).body.items;
    expect(items.items.map((i: { canonical_url: string }) => i.canonical_url).sort()).toEqual(
      entries.map((e) => e.canonicalUrl).sort(),
    );
    expect(items.items[0].provenance).toMatchObject({
      source_key: key,
      raw_body_hash: createHash("sha256").update(FEEDS.rss.body).digest("hex"),
      terms: NOTES.terms_note,
    });
    expect(items.items[0].provenance.parser_version).not.toBe("");
    expect(items.sources).toMatchObject([{ source_key: key, health: { staleness: "STALENESS_FRESH" } }]);

    const second = await fetched(key);
    expect(second).toMatchObject({ state: "RUN_STATE_NOT_MODIFIED", http_status: 304, items_new: 0 });
    const conditional = site.requests.filter((r) => r.url === "/feed.xml" && r.headers["if-none-match"] === '"v1"');
    expect(conditional.length).toBeGreaterThan(0);
    // Per-host politeness: at least a second between two fetches of one host.
    expect(Date.parse(second.started_at) - Date.parse(first.started_at)).toBeGreaterThanOrEqual(1_000);
    expect((await call("GET", `/items?source_key=${key}`)).body.items.items).toHaveLength(entries.length);
  });

  it("leaves out and counts an entry over a field's cap (a 600,000-character title): the run succeeds for the others", async () => {
    const key = await siteSource("/oversized.xml");
    const run = await fetched(key);
    expect(run).toMatchObject({ state: "RUN_STATE_SUCCEEDED", items_new: 1, entries_skipped: OVERSIZED.skipped });
    const items = (await call("GET", `/items?source_key=${key}`)).body.items.items;
    expect(items.map((item: { canonical_url: string }) => item.canonical_url)).toEqual([OVERSIZED.kept]);
    // Every run of it goes the same way: the entry never makes the source fail.
    expect(await fetched(key)).toMatchObject({ state: "RUN_STATE_SUCCEEDED", entries_skipped: OVERSIZED.skipped });
  });

  it("sends the credential read at fetch time; no answer ever carries its value", async () => {
    const key = await siteSource("/feed.xml?auth", {
      credential: { variable: "PF_SOURCE_CRED_FIXTURE", scheme: "CREDENTIAL_SCHEME_BEARER" },
    });
    const run = await fetched(key);
    expect(run.state).toBe("RUN_STATE_SUCCEEDED");
    const sent = site.requests.find((r) => r.url === "/feed.xml?auth");
    expect(sent?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const answers = [
      await call("GET", `/sources/${key}`),
      await call("GET", `/sources/${key}/runs`),
      await call("GET", `/items?source_key=${key}`),
      await call("GET", "/health"),
    ];
    for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain(SECRET);
  });

  it("a credential whose variable is not set fails the run credential_missing, sending nothing", async () => {
    const key = await siteSource("/feed.xml?missing", {
      credential: { variable: "PF_SOURCE_CRED_UNSET", scheme: "CREDENTIAL_SCHEME_BEARER" },
    });
    expect(await fetched(key)).toMatchObject({
      state: "RUN_STATE_FAILED",
      failure_class: "FAILURE_CLASS_CREDENTIAL_MISSING",
    });
    expect(site.requests.some((r) => r.url === "/feed.xml?missing")).toBe(false);
  });

  it("each fault leaves a failed run with its class and nothing half-written", async () => {
    const cases: [string, string, string?][] = [
      ["/status-500", "FAILURE_CLASS_HTTP_STATUS"],
      ["/slow", "FAILURE_CLASS_TIMEOUT"],
      ["/endless", "FAILURE_CLASS_TOO_LARGE"],
      ["/huge", "FAILURE_CLASS_TOO_LARGE"],
      ["/bomb", "FAILURE_CLASS_TOO_LARGE"],
      ["/to-loopback", "FAILURE_CLASS_REFUSED_ADDRESS"],
      ["/to-private", "FAILURE_CLASS_REFUSED_ADDRESS"],
      ["/broken.xml", "FAILURE_CLASS_PARSE_ERROR"],
      ["/long-tag", "FAILURE_CLASS_PARSE_ERROR"],
      ["/bad.html", "FAILURE_CLASS_PARSE_ERROR", "SOURCE_KIND_HTML_PAGE"],
      ["/drop", "FAILURE_CLASS_CONNECT"],
      ["/private/feed.xml", "FAILURE_CLASS_ROBOTS_DISALLOWED"],
    ];
    for (const [path, failureClass, kind] of cases) {
      const key = await siteSource(path, kind ? { kind } : {});
      expect(await fetched(key), path).toMatchObject({ state: "RUN_STATE_FAILED", failure_class: failureClass });
      expect((await call("GET", `/items?source_key=${key}&include_removed=1`)).body.items.items, path).toEqual([]);
      expect((await call("GET", `/sources/${key}`)).body.source.health, path).toMatchObject({
        consecutive_failures: 1,
        last_failure_class: failureClass,
      });
    }
    expect(inside.connections).toBe(0);
    // No run of these sources is left queued or running.
    const active = (await call("GET", "/runs?limit=200")).body.runs.runs.filter((run: { state: string }) =>
      ["RUN_STATE_QUEUED", "RUN_STATE_RUNNING"].includes(run.state),
    );
    expect(active).toEqual([]);
  }, 60_000);
});
