import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createGzip } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import type { Resolver } from "../../services/kit/outbound/fetch.js";
import { credentialNameProblem, fetchSource, type FetchTarget } from "../../services/sources/fetch/fetch-source.js";
import { fixtureServer, socketsOpenedBy, testSettings, type Fixture } from "../support/http-fixture.js";
import { FEEDS } from "../support/source-feeds.js";

const open: Fixture[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

type Route = (request: IncomingMessage, response: ServerResponse) => void;

/** A site on 127.0.0.1: its routes by path, robots.txt answering 404 unless given. */
async function site(routes: Record<string, Route>): Promise<Fixture> {
  const server = await fixtureServer((request, response) => {
    const route = routes[request.url!] ?? (() => response.writeHead(404).end("not here"));
    route(request, response);
  });
  open.push(server);
  return server;
}

const serve =
  (body: string | Buffer, headers: Record<string, string> = {}): Route =>
  (_request, response) =>
    response.writeHead(200, headers).end(body);

const pathsAsked = (server: Fixture) => server.requests.map((request) => request.url);

describe("fetchSource", () => {
  it.each(Object.entries(FEEDS))("reads a %s source", async (kind, feed) => {
    const server = await site({ "/source": serve(feed.body, { "content-type": feed.type, etag: '"v1"' }) });
    const outcome = await fetchSource(
      { kind: kind as FetchTarget["kind"], url: server.url("/source") },
      {},
      testSettings([server.host]),
    );
    if (outcome.state !== "succeeded") throw new Error(`expected success, got ${JSON.stringify(outcome)}`);
    expect(outcome.httpStatus).toBe(200);
    expect(outcome.etag).toBe('"v1"');
    expect(outcome.parserVersion).toBe(`${kind}@1`);
    expect(outcome.bytes).toBe(Buffer.byteLength(feed.body));
    expect(outcome.rawBodyHash).toBe(createHash("sha256").update(feed.body).digest("hex"));
    expect(outcome.entries).toEqual(feed.entries(server.url("")));
    expect(pathsAsked(server)).toEqual(["/robots.txt", "/source"]);
  });

  it("asks conditionally with the last ETag and Last-Modified, and answers not_modified", async () => {
    const lastModified = "Wed, 25 Nov 2026 10:00:00 GMT";
    const server = await site({
      "/feed": (request, response) => {
        if (request.headers["if-none-match"] === '"v7"' && request.headers["if-modified-since"] === lastModified)
          response.writeHead(304).end();
        else response.writeHead(200, { "last-modified": lastModified }).end(FEEDS.rss.body);
      },
    });
    const settings = testSettings([server.host]);
    const first = await fetchSource({ kind: "rss", url: server.url("/feed") }, {}, settings);
    expect(first.state === "succeeded" && first.lastModified).toBe(lastModified);
    const again = await fetchSource(
      { kind: "rss", url: server.url("/feed"), etag: '"v7"', lastModified },
      {},
      settings,
    );
    expect(again).toEqual({ state: "not_modified", httpStatus: 304 });
  });

  it("honours robots.txt for the platform's User-Agent, and a failing robots.txt disallows", async () => {
    const robots = "User-agent: *\nDisallow: /\n\nUser-agent: pf-platform\nDisallow: /private/\nAllow: /\n";
    const server = await site({
      "/robots.txt": serve(robots, { "content-type": "text/plain" }),
      "/private/feed": serve(FEEDS.rss.body),
      "/public/feed": serve(FEEDS.rss.body),
    });
    const settings = testSettings([server.host]);
    const refused = await fetchSource({ kind: "rss", url: server.url("/private/feed") }, {}, settings);
    expect(refused).toMatchObject({ state: "failed", failureClass: "robots_disallowed" });
    expect((await fetchSource({ kind: "rss", url: server.url("/public/feed") }, {}, settings)).state).toBe("succeeded");
    expect(pathsAsked(server)).not.toContain("/private/feed");

    const down = await site({
      "/robots.txt": (_q, response) => response.writeHead(503).end(),
      "/feed": serve(FEEDS.rss.body),
    });
    const outcome = await fetchSource({ kind: "rss", url: down.url("/feed") }, {}, testSettings([down.host]));
    expect(outcome).toMatchObject({ state: "failed", failureClass: "robots_disallowed" });
    expect(pathsAsked(down)).toEqual(["/robots.txt"]);
  });

  it("sends the credential from the environment to the source's host only, in each scheme", async () => {
    const other = await site({ "/moved": serve(FEEDS.rss.body) });
    const server = await site({
      "/feed": serve(FEEDS.rss.body),
      "/redirected": (_request, response) => response.writeHead(302, { location: other.url("/moved") }).end(),
    });
    const env = { PF_SOURCE_CRED_NEWS: "s3cret-value", PF_SOURCE_CRED_PAIR: "me:pa55" };
    const settings = testSettings([server.host, other.host]);
    const schemes: [FetchTarget["credential"], string, string][] = [
      [{ variable: "PF_SOURCE_CRED_NEWS", scheme: "bearer" }, "authorization", "Bearer s3cret-value"],
      [
        { variable: "PF_SOURCE_CRED_PAIR", scheme: "basic" },
        "authorization",
        `Basic ${Buffer.from("me:pa55").toString("base64")}`,
      ],
      [{ variable: "PF_SOURCE_CRED_NEWS", scheme: "header", header: "X-Api-Key" }, "x-api-key", "s3cret-value"],
    ];
    for (const [credential, header, value] of schemes) {
      const outcome = await fetchSource({ kind: "rss", url: server.url("/feed"), credential }, env, settings);
      expect(outcome.state).toBe("succeeded");
      const sent = server.requests.filter((request) => request.url === "/feed").at(-1)!;
      expect(sent.headers[header]).toBe(value);
      const robots = server.requests.filter((request) => request.url === "/robots.txt").at(-1)!;
      expect(robots.headers[header], "robots.txt is fetched without the credential").toBeUndefined();
    }
    const moved = await fetchSource(
      { kind: "rss", url: server.url("/redirected"), credential: schemes[0][0] },
      env,
      settings,
    );
    expect(moved.state).toBe("succeeded");
    expect(server.requests.find((request) => request.url === "/redirected")!.headers.authorization).toBe(
      "Bearer s3cret-value",
    );
    expect(other.requests.find((request) => request.url === "/moved")!.headers.authorization).toBeUndefined();
  });

  it("answers credential_missing, asking nothing, when the variable is unset or outside the prefix", async () => {
    const server = await site({ "/feed": serve(FEEDS.rss.body) });
    const settings = testSettings([server.host]);
    for (const variable of ["PF_SOURCE_CRED_UNSET", "DATABASE_URL", "PF_JWT_PRIVATE_KEY"]) {
      const outcome = await fetchSource(
        { kind: "rss", url: server.url("/feed"), credential: { variable, scheme: "bearer" } },
        { DATABASE_URL: "postgres://secret", PF_JWT_PRIVATE_KEY: "key" },
        settings,
      );
      expect(outcome).toMatchObject({ state: "failed", failureClass: "credential_missing" });
      expect(JSON.stringify(outcome)).not.toMatch(/postgres:\/\/secret|"key"/);
    }
    expect(server.connections).toBe(0);
    expect(credentialNameProblem("PF_SOURCE_CRED_NEWS_API")).toBeUndefined();
    for (const name of ["DATABASE_URL", "PF_SOURCE_CRED_", "pf_source_cred_x", "PF_SOURCE_CRED_A-B"])
      expect(credentialNameProblem(name), name).toBeDefined();
  });

  it("fails with its class on every fault of the source, and never throws", async () => {
    const inside = await site({ "/": serve("inside") });
    const server = await site({
      "/slow": () => undefined,
      "/endless": (_request, response) => {
        response.writeHead(200, { "content-type": "application/rss+xml" });
        const chunk = Buffer.alloc(64 * 1024, 32);
        const more = () => {
          while (!response.destroyed && response.write(chunk));
        };
        response.on("drain", more);
        more();
      },
      "/huge": (_request, response) =>
        response.writeHead(200, { "content-length": String(5 * 1024 ** 3) }).write("<rss>"),
      "/bomb": (_request, response) => {
        response.writeHead(200, { "content-encoding": "gzip" });
        const gzip = createGzip();
        gzip.pipe(response);
        response.on("close", () => gzip.destroy());
        let left = 512;
        const zeros = Buffer.alloc(1024 * 1024, 32);
        const more = () => {
          while (left > 0 && !response.destroyed && gzip.write(zeros)) left--;
          if (left === 0) gzip.end();
        };
        gzip.on("drain", more);
        more();
      },
      "/to-loopback": (_request, response) => response.writeHead(302, { location: inside.url("/") }).end(),
      "/to-private": (_request, response) => response.writeHead(301, { location: "http://10.1.2.3/feed" }).end(),
      "/to-named-private": (_request, response) => response.writeHead(307, { location: "http://intranet.test/" }).end(),
      "/bad-xml": serve("<rss><channel><item><title>unclosed</channel></rss>"),
      "/not-rss": serve("<html><body>hello</body></html>"),
      "/bad-json": serve("{ items: [ }"),
      "/not-html": serve(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x1a])),
      "/text": serve("just words, no markup at all"),
      "/drop": (request) => request.socket.destroy(),
      "/drop-mid-body": (request, response) => {
        response.writeHead(200, { "content-length": "100000" });
        response.write("<rss>", () => request.socket.destroy());
      },
      "/error": (_request, response) => response.writeHead(500).end("oops"),
      "/gone": (_request, response) => response.writeHead(410).end(),
    });
    const resolve: Resolver = async (host) => {
      if (host === "intranet.test") return [{ address: "192.168.7.7", family: 4 }];
      throw Object.assign(new Error("no such host"), { code: "ENOTFOUND" });
    };
    const settings = testSettings([server.host], { totalTimeoutMs: 1_000, maxBytes: 512 * 1024, resolve });
    const cases: [string, FetchTarget["kind"], string, number?][] = [
      ["/slow", "rss", "timeout"],
      ["/endless", "rss", "too_large"],
      ["/huge", "rss", "too_large"],
      ["/bomb", "rss", "too_large"],
      ["/to-loopback", "rss", "refused_address"],
      ["/to-private", "rss", "refused_address"],
      ["/to-named-private", "rss", "refused_address"],
      ["/bad-xml", "rss", "parse_error", 200],
      ["/bad-xml", "atom", "parse_error", 200],
      ["/not-rss", "rss", "parse_error", 200],
      ["/bad-json", "json_feed", "parse_error", 200],
      ["/bad-json", "json_api", "parse_error", 200],
      ["/not-html", "html_page", "parse_error", 200],
      ["/text", "html_page", "parse_error", 200],
      ["/drop", "rss", "connect"],
      ["/drop-mid-body", "rss", "connect"],
      ["/error", "rss", "http_status", 500],
      ["/gone", "json_api", "http_status", 410],
    ];
    for (const [path, kind, failureClass, httpStatus] of cases) {
      let outcome: unknown;
      // robots.txt and the source itself connect; a third socket (a refused hop) is fenced off.
      await socketsOpenedBy(
        async () => (outcome = await fetchSource({ kind, url: server.url(path) }, {}, settings)),
        2,
      );
      const expected = httpStatus === undefined ? { failureClass } : { failureClass, httpStatus };
      expect(outcome, `${kind} ${path}`).toMatchObject({ state: "failed", ...expected });
    }
    expect(inside.connections).toBe(0);
    const elsewhere: [string, string][] = [
      ["https://no-such-host.test/feed", "dns"],
      [inside.url("/feed"), "refused_address"],
      ["ftp://files.test/feed", "refused_address"],
      ["not a url", "refused_address"],
    ];
    for (const [url, failureClass] of elsewhere)
      expect(await fetchSource({ kind: "rss", url }, {}, settings), url).toMatchObject({
        state: "failed",
        failureClass,
      });
    expect(inside.connections).toBe(0);
  });
});
