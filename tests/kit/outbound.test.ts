import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync, createGzip } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { fetchOutbound, OutboundError, outboundSettings, type Resolver } from "../../services/kit/outbound/fetch.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { fixtureServer, socketsOpenedBy, testSettings, type Fixture } from "../support/http-fixture.js";
import { REFUSED } from "../support/refused-addresses.js";
import { every } from "../support/timers.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function fixture(handle: Parameters<typeof fixtureServer>[0]): Promise<Fixture> {
  const server = await fixtureServer(handle);
  open.push(server);
  return server;
}

/** The failure a fetch ends with (it must fail). */
async function failureOf(promise: Promise<unknown>): Promise<{ failure: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the fetch should have failed").toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

const answering =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("fetchOutbound", () => {
  it("fetches from a listed fixture and decompresses gzip, deflate and br", async () => {
    const text = "hello ".repeat(1000);
    const site = await fixture((request, response) => {
      const encoding = request.url!.slice(1);
      const body = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync, plain: Buffer.from }[encoding]!(
        text,
      );
      response.writeHead(200, encoding === "plain" ? {} : { "content-encoding": encoding, "x-seen": "1" });
      response.end(body);
    });
    for (const encoding of ["plain", "gzip", "deflate", "br"]) {
      const answer = await fetchOutbound({ url: site.url(`/${encoding}`) }, testSettings([site.host]));
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe(text);
    }
    expect(site.requests[0].headers["user-agent"]).toMatch(/^pf-platform\//);
    expect(site.requests[0].headers["accept-encoding"]).toBe("gzip, deflate, br");
  });

  it("refuses 127.0.0.1 however it is written unless its host:port is listed, before connecting", async () => {
    const site = await fixture((_request, response) => response.end("inside"));
    for (const host of ["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "[::ffff:127.0.0.1]", "[::1]"]) {
      const failure = await failureOf(fetchOutbound({ url: `http://${host}:${site.port}/` }, testSettings([])));
      expect(failure.failure, host).toBe("refused_address");
    }
    expect(site.connections).toBe(0);
  });

  it.each(REFUSED)("refuses a host resolving to %s before any connection", async (address, range) => {
    const site = await fixture((_request, response) => response.end("inside"));
    const settings = testSettings([], { resolve: answering(address) });
    for (const url of ["http://evil.test/", `http://evil.test:${site.port}/`]) {
      let failure: { failure: string; message: string } | undefined;
      const sockets = await socketsOpenedBy(async () => (failure = await failureOf(fetchOutbound({ url }, settings))));
      expect(failure?.failure).toBe("refused_address");
      expect(failure?.message).toMatch(range);
      expect(failure?.message).not.toContain(address);
      expect(sockets, url).toBe(0);
    }
    expect(site.connections).toBe(0);
  });

  it("refuses over https too, before the fixture sees a connection", async () => {
    const site = await fixture((_request, response) => response.end("inside"));
    for (const address of ["127.0.0.1", "::ffff:127.0.0.1", "64:ff9b::7f00:1"]) {
      const settings = testSettings([], { resolve: answering(address) });
      const failure = await failureOf(fetchOutbound({ url: `https://evil.test:${site.port}/` }, settings));
      expect(failure.failure).toBe("refused_address");
      expect(failure.message, "refused for the address, not only the port").toMatch(/loopback/);
    }
    expect(site.connections).toBe(0);
  });

  it("refuses a host when any one of its answers is refused", async () => {
    const settings = testSettings([], { resolve: answering("93.184.216.34", "10.0.0.5") });
    const sockets = await socketsOpenedBy(async () =>
      expect((await failureOf(fetchOutbound({ url: "http://mixed.test/" }, settings))).failure).toBe("refused_address"),
    );
    expect(sockets).toBe(0);
  });

  it("refuses other schemes, user names, other ports and names that do not resolve, before connecting", async () => {
    const publicHost = testSettings([], { resolve: answering("93.184.216.34") });
    const cases: [string, string, Resolver?][] = [
      ["ftp://files.test/a", "invalid_url"],
      ["file:///etc/passwd", "invalid_url"],
      ["http://user:secret@site.test/", "invalid_url"],
      ["not a url", "invalid_url"],
      ["http://site.test:8080/", "refused_address"],
      ["http://site.test:22/", "refused_address"],
      [
        "https://missing.test/",
        "dns",
        async () => Promise.reject(Object.assign(new Error("x"), { code: "ENOTFOUND" })),
      ],
      ["https://empty.test/", "dns", async () => []],
    ];
    for (const [url, failure, resolve] of cases) {
      const settings = resolve ? { ...publicHost, resolve } : publicHost;
      const sockets = await socketsOpenedBy(async () =>
        expect((await failureOf(fetchOutbound({ url }, settings))).failure, url).toBe(failure),
      );
      expect(sockets, url).toBe(0);
    }
  });

  it("checks every redirect again: to 127.0.0.1 unlisted, to a private address, to a name resolving to one", async () => {
    const inside = await fixture((_request, response) => response.end("inside"));
    const targets = [
      inside.url("/"),
      "http://10.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://intranet.test/",
    ];
    const site = await fixture((request, response) => {
      response.writeHead(302, { location: targets[Number(request.url!.slice(1))] });
      response.end();
    });
    const settings = testSettings([site.host], { resolve: answering("192.168.0.10") });
    for (const [index] of targets.entries()) {
      const sockets = await socketsOpenedBy(async () => {
        const failure = await failureOf(fetchOutbound({ url: site.url(`/${index}`) }, settings));
        expect(failure.failure, targets[index]).toBe("refused_address");
      }, 1);
      expect(sockets, "only the first hop connects").toBe(1);
    }
    expect(inside.connections).toBe(0);
    expect(site.connections).toBe(targets.length);
  });

  it("follows redirects by hand, keeps credentials on the host and drops them on another", async () => {
    const other = await fixture((_request, response) => response.end("moved here"));
    const site = await fixture((request, response) => {
      if (request.url === "/start") response.writeHead(301, { location: "/same-host" }).end();
      else response.writeHead(307, { location: other.url("/elsewhere") }).end();
    });
    const answer = await fetchOutbound(
      {
        url: site.url("/start"),
        headers: { Cookie: "session=1", Accept: "text/plain" },
        credentialHeaders: { Authorization: "Bearer s3cret", "X-Api-Key": "k3y" },
      },
      testSettings([site.host, other.host]),
    );
    expect(answer.body.toString()).toBe("moved here");
    expect(answer.url).toBe(other.url("/elsewhere"));
    const [start, same] = site.requests;
    for (const request of [start, same]) {
      expect(request.headers.authorization).toBe("Bearer s3cret");
      expect(request.headers["x-api-key"]).toBe("k3y");
    }
    const elsewhere = other.requests[0];
    expect(elsewhere.headers.authorization).toBeUndefined();
    expect(elsewhere.headers["x-api-key"]).toBeUndefined();
    expect(elsewhere.headers.cookie).toBeUndefined();
    expect(elsewhere.headers.accept).toBe("text/plain");
  });

  it("stops after five redirects", async () => {
    const site = await fixture((_request, response) => response.writeHead(302, { location: "/again" }).end());
    const failure = await failureOf(fetchOutbound({ url: site.url("/") }, testSettings([site.host])));
    expect(failure.failure).toBe("too_many_redirects");
    expect(site.requests).toHaveLength(6);
  });

  it("times out on a server that never answers, and on one that trickles its body", async () => {
    const silent = await fixture(() => undefined);
    const trickle = await fixture((_request, response) => {
      response.writeHead(200);
      const stop = every(50, () => response.write("."));
      response.on("close", stop);
    });
    for (const site of [silent, trickle]) {
      const started = Date.now();
      const failure = await failureOf(
        fetchOutbound({ url: site.url("/") }, testSettings([site.host], { totalTimeoutMs: 400 })),
      );
      expect(failure.failure).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });

  it("times out connecting when the TLS handshake never ends, and when the resolver never answers", async () => {
    const tcp = createTcpServer((socket) => socket.resume()); // reading, so it sees the client hang up
    await new Promise<void>((done) => tcp.listen(0, "127.0.0.1", done));
    open.push({ close: () => new Promise<void>((done) => tcp.close(() => done())) });
    const host = `127.0.0.1:${(tcp.address() as AddressInfo).port}`;
    const tls = await failureOf(
      fetchOutbound({ url: `https://${host}/` }, testSettings([host], { connectTimeoutMs: 200 })),
    );
    expect(tls.failure).toBe("timeout");
    expect(tls.message).toMatch(/no connection within 200 ms/);
    const hanging = testSettings([], { totalTimeoutMs: 200, resolve: () => new Promise(() => undefined) });
    expect((await failureOf(fetchOutbound({ url: "https://slow-dns.test/" }, hanging))).failure).toBe("timeout");
  });

  it("stops an endless body at the cap", async () => {
    const site = await fixture((_request, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 97);
      const more = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on("drain", more);
      more();
    });
    const failure = await failureOf(
      fetchOutbound({ url: site.url("/") }, testSettings([site.host], { maxBytes: 256 * 1024 })),
    );
    expect(failure.failure).toBe("too_large");
  });

  it("refuses a 5 GB Content-Length without reading the body", async () => {
    let written = 0;
    const site = await fixture((_request, response) => {
      response.writeHead(200, { "content-length": String(5 * 1024 ** 3) });
      response.write(Buffer.alloc(1024));
      written += 1024;
    });
    const started = Date.now();
    const failure = await failureOf(fetchOutbound({ url: site.url("/") }, testSettings([site.host])));
    expect(failure.failure).toBe("too_large");
    expect(failure.message).toMatch(/Content-Length 5368709120/);
    expect(written).toBe(1024);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("stops a gzip bomb at the decompressed cap", async () => {
    let sent = 0;
    const site = await fixture((_request, response) => {
      response.writeHead(200, { "content-encoding": "gzip" });
      const gzip = createGzip();
      gzip.on("data", (chunk: Buffer) => (sent += chunk.length));
      gzip.pipe(response);
      const zeros = Buffer.alloc(1024 * 1024);
      let left = 1024; // a gigabyte of zeros, about a megabyte on the wire
      const more = () => {
        while (left > 0 && !response.destroyed && gzip.write(zeros)) left--;
        if (left === 0) gzip.end();
      };
      gzip.on("drain", more);
      response.on("close", () => gzip.destroy());
      more();
    });
    const failure = await failureOf(
      fetchOutbound({ url: site.url("/") }, testSettings([site.host], { maxBytes: 1024 * 1024 })),
    );
    expect(failure.failure).toBe("too_large");
    expect(failure.message).toMatch(/decompressed/);
    expect(sent).toBeLessThan(1024 * 1024);
  });

  it("answers connect when the connection drops before the answer, protocol when during the body", async () => {
    const hangsUp = await fixture((request) => request.socket.destroy());
    const midBody = await fixture((request, response) => {
      response.writeHead(200, { "content-length": "1000" });
      response.write("partial", () => request.socket.destroy());
    });
    const settings = testSettings([hangsUp.host, midBody.host]);
    expect((await failureOf(fetchOutbound({ url: hangsUp.url("/") }, settings))).failure).toBe("connect");
    expect((await failureOf(fetchOutbound({ url: midBody.url("/") }, settings))).failure).toBe("protocol");
  });

  it("answers connect when nothing listens", async () => {
    const site = await fixture(() => undefined);
    await site.close();
    const failure = await failureOf(fetchOutbound({ url: site.url("/") }, testSettings([site.host])));
    expect(failure.failure).toBe("connect");
    expect(failure.message).toMatch(/ECONNREFUSED/);
  });

  it("reads its settings: nothing allowed by default, host:port entries, never allowed in production", () => {
    const plain = outboundSettings(loadConfig({}));
    expect(plain).toMatchObject({
      allowHosts: [],
      totalTimeoutMs: 30_000,
      connectTimeoutMs: 5_000,
      maxBytes: 10_485_760,
    });
    expect(plain.maxRedirects).toBe(5);
    const set = outboundSettings(
      loadConfig({
        PF_FETCH_ALLOW_HOSTS: "127.0.0.1:8089, [::1]:80",
        PF_FETCH_TIMEOUT_MS: "1500",
        PF_FETCH_MAX_BYTES: "2048",
      }),
    );
    expect(set).toMatchObject({ allowHosts: ["127.0.0.1:8089", "[::1]:80"], totalTimeoutMs: 1500, maxBytes: 2048 });
    expect(() => outboundSettings(loadConfig({ PF_FETCH_ALLOW_HOSTS: "127.0.0.1" }))).toThrow(/host:port/);
    expect(() => outboundSettings(loadConfig({ PF_FETCH_MAX_BYTES: "-1" }))).toThrow(/PF_FETCH_MAX_BYTES/);
    const production = { ...loadConfig({}), production: true };
    expect(() => outboundSettings({ ...production, env: { PF_FETCH_ALLOW_HOSTS: "127.0.0.1:80" } })).toThrow(
      /production/,
    );
  });
});
