import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { generate } from "selfsigned";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ToolsContext } from "../../services/tools/context.js";
import { ProbeLogRow } from "../../services/tools/db/entities.js";
import { probeBinaries } from "../../services/tools/domain/probes/binaries.js";
import { netTools } from "../../services/tools/families/net/index.js";
import { ToolFailure } from "../../services/tools/families/tool.js";
import type { JsonObject } from "../../services/tools/catalogue/descriptor.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { schemaCheck } from "../../services/kit/documents/json-schema.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { sql } from "../../services/kit/db/sql.js";
import { readPing, readTraceroute } from "../../services/tools/domain/probes/icmp.js";
import { normalHost, targetKey } from "../../services/tools/domain/probes/target.js";
import { fixtureServer, type Fixture } from "../support/http-fixture.js";
import { usePlatform } from "../support/platform.js";

// Every target is a listener on 127.0.0.1 of this file's own, reachable only because PF_FETCH_ALLOW_HOSTS lists
// its host:port (the kit's test switch); anything else on loopback stays refused. The clock stands still in the
// middle of a minute, so no throttle window ends between the runs of a test.
const clock = new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000));
const env: Record<string, string> = {};
let open: Server;
let closedPort: number;
let unlisted: Server;
let unlistedPort: number;
let unlistedConnections = 0;
let secure: Server;
let site: Fixture;
let endless: Fixture;

beforeAll(async () => {
  open = await listening(createServer((socket) => socket.destroy()));
  closedPort = await freePort();
  // A listener the test does not list: nothing may ever reach it.
  unlisted = await listening(createServer((socket) => socket.destroy()));
  unlisted.on("connection", () => unlistedConnections++);
  unlistedPort = portOf(unlisted);
  const pems = await generate([{ name: "commonName", value: "probe.test" }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: new Date(clock.now().getTime() - 86_400_000),
    notAfterDate: new Date(clock.now().getTime() + 10.5 * 86_400_000),
    extensions: [
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "probe.test" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  secure = await listening(createTlsServer({ key: pems.private, cert: pems.cert }, (socket) => socket.end()));
  site = await fixtureServer((request, response) => {
    if (request.url === "/moved") response.writeHead(301, { location: "/here" }).end();
    else if (request.url === "/inside")
      response.writeHead(302, { location: `http://127.0.0.1:${unlistedPort}/` }).end();
    else response.writeHead(200, { "x-probe": "yes", "content-type": "text/plain" }).end("hello");
  });
  // A body that never ends: a probe that read it would never answer.
  endless = await fixtureServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/octet-stream" });
    // Each chunk once the last was taken: endless, yet never faster than the reader.
    const more = (error?: Error | null) => {
      if (!error && !response.destroyed) response.write(Buffer.alloc(64 * 1024), more);
    };
    more();
  });
  const listed = [portOf(open), closedPort, portOf(secure), site.port, endless.port];
  env.PF_FETCH_ALLOW_HOSTS = listed.map((port) => `127.0.0.1:${port}`).join(",");
});

const t = usePlatform({ services: ["tools", "media"], clock, env });

afterAll(async () => {
  for (const server of [open, secure, unlisted]) server?.close();
  await Promise.all([site?.close(), endless?.close()]);
});

function listening(server: Server): Promise<Server> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** A port nothing listens on: one just given back. */
async function freePort(): Promise<number> {
  const server = await listening(createServer());
  const port = portOf(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const ctx = () => t.platform.contexts.get("tools") as ToolsContext;

/** Runs a probe tool as the run route would: its input checked against its schema, its output too. */
async function run(tool: string, input: JsonObject, caller = "app:partner-one"): Promise<JsonObject> {
  const descriptor = ctx().catalogue.available(tool);
  expect(schemaCheck(descriptor.input as object)(input), "input").toEqual([]);
  const output = await netTools[tool](input, {
    ctx: ctx(),
    caller,
    signal: AbortSignal.timeout(descriptor.limits.timeoutMs),
  });
  expect(schemaCheck(descriptor.output)(output), "output").toEqual([]);
  return output;
}

/** How a run that must not succeed ended: its problem (a thrown ConnectError) or its failure (a ToolFailure). */
async function refusal(
  tool: string,
  input: JsonObject,
  caller?: string,
): Promise<{ failure?: string; status?: number; code?: string; detail: string; extensions?: JsonObject }> {
  const error = await run(tool, input, caller).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "the run should have been refused").toBeDefined();
  if (error instanceof ToolFailure) return { failure: error.code, detail: error.detail };
  const { status, code, detail, extensions } = problemOf(error);
  return { status, code, detail, extensions };
}

const logRows = () =>
  ctx()
    .orm.em.fork()
    .find(ProbeLogRow, {}, { orderBy: { id: "asc" } });

describe("probes at loopback listeners the test lists", () => {
  it("net.port: an open port, a closed one", async () => {
    const answer = await run("net.port", { host: "127.0.0.1", port: portOf(open) });
    expect(answer).toMatchObject({ host: "127.0.0.1", port: portOf(open), address: "127.0.0.1", state: "open" });
    expect(answer.ms).toBeGreaterThanOrEqual(0);
    expect(await run("net.port", { host: "127.0.0.1", port: closedPort })).toMatchObject({ state: "closed" });
  });

  it("net.latency: n connects, each answered, with their minimum, mean and maximum", async () => {
    const answer = await run("net.latency", { host: "127.0.0.1", port: portOf(open), count: 4 });
    expect(answer).toMatchObject({ sent: 4, answered: 4 });
    const samples = answer.samples_ms as number[];
    expect(samples).toHaveLength(4);
    expect(answer.min_ms).toBe(Math.min(...samples));
    expect(answer.max_ms).toBe(Math.max(...samples));
    expect(answer.avg_ms as number).toBeGreaterThanOrEqual(answer.min_ms as number);
  });

  it("net.tls: the certificate of a self-signed server, reported rather than refused", async () => {
    const answer = await run("net.tls", { host: "127.0.0.1", port: portOf(secure) });
    expect(answer).toMatchObject({
      address: "127.0.0.1",
      authorized: false,
      authorization_error: "DEPTH_ZERO_SELF_SIGNED_CERT",
      subject: { CN: "probe.test" },
      issuer: { CN: "probe.test" },
      subject_alt_names: ["DNS:probe.test", "IP Address:127.0.0.1"],
      days_left: 10,
    });
    expect(answer.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(answer.fingerprint_sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    // A plain TCP listener does not speak TLS: the run fails, it is not refused.
    expect(await refusal("net.tls", { host: "127.0.0.1", port: portOf(open) })).toMatchObject({
      failure: "tools.probe.failed",
    });
  });

  it("net.headers: status and headers through the guarded fetch, redirects followed, a body never read", async () => {
    const answer = await run("net.headers", { url: site.url("/moved") });
    expect(answer).toMatchObject({ status: 200, final_url: site.url("/here"), headers: { "x-probe": "yes" } });
    expect(site.requests.map((request) => [request.method, request.url])).toEqual([
      ["HEAD", "/moved"],
      ["HEAD", "/here"],
    ]);
    // GET of a body that never ends: answered at its headers.
    expect(await run("net.headers", { url: endless.url("/"), method: "GET" })).toMatchObject({ status: 200 });
    // A redirect inside (to a port the test does not list) fails the run, never followed.
    expect(await refusal("net.headers", { url: site.url("/inside") })).toMatchObject({
      failure: "tools.probe.refused",
    });
    expect(unlistedConnections).toBe(0);
  });
});

describe("never aimed inside", () => {
  it.each([
    ["127.0.0.1 on a port not listed", () => ({ host: "127.0.0.1", port: unlistedPort })],
    ["127.0.0.1 written as a number", () => ({ host: "2130706433", port: unlistedPort })],
    ["the metadata address", () => ({ host: "169.254.169.254", port: 80 })],
    ["[::1]", () => ({ host: "[::1]", port: portOf(open) })],
    ["a name resolving to loopback", () => ({ host: "localhost", port: portOf(open) })],
    ["a private address", () => ({ host: "10.1.2.3", port: 22 })],
    ["a CGNAT address", () => ({ host: "100.64.0.1", port: 22 })],
  ])("refuses %s with 400 tools.target_refused, before connecting", async (_name, target) => {
    const before = await logRows();
    for (const tool of ["net.port", "net.latency", "net.tls"]) {
      const problem = await refusal(tool, target());
      expect(problem, tool).toMatchObject({ status: 400, code: "tools.target_refused" });
    }
    const rows = (await logRows()).slice(before.length);
    expect(rows.map((row) => [row.tool, row.outcome])).toEqual([
      ["net.port", "refused"],
      ["net.latency", "refused"],
      ["net.tls", "refused"],
    ]);
    expect(unlistedConnections).toBe(0);
  });

  it("names the range, never what a name resolved to", async () => {
    const problem = await refusal("net.port", { host: "localhost", port: portOf(open) });
    expect(problem.detail).toMatch(/localhost.*loopback/);
    expect(problem.detail).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it("refuses URLs aimed inside the same way (net.headers)", async () => {
    for (const url of [
      `http://localhost:${site.port}/`,
      `http://[::1]:${site.port}/`,
      "http://169.254.169.254/latest/meta-data/",
      `http://127.0.0.1:${unlistedPort}/`,
    ]) {
      expect(await refusal("net.headers", { url }), url).toMatchObject({ status: 400, code: "tools.target_refused" });
    }
    expect(site.requests.filter((request) => request.url === "/latest/meta-data/")).toEqual([]);
  });
});

describe("the per-target throttle, across callers", () => {
  it("takes limits.perTargetPerMinute runs at a target from everyone together, then 429 until the minute ends", async () => {
    clock.advance(60_000); // a minute of its own
    const limit = ctx().catalogue.available("net.port").limits.perTargetPerMinute!;
    for (let n = 0; n < limit; n++)
      await run("net.port", { host: "127.0.0.1", port: portOf(open) }, n % 2 ? "app:one" : "svc:two");
    const throttled = await refusal("net.port", { host: "127.0.0.1", port: closedPort }, "app:three");
    expect(throttled).toMatchObject({ status: 429, code: "tools.target_throttled" });
    expect(throttled.extensions?.retry_after_seconds).toBe(30);
    // Another tool has a count of its own; the next minute the target takes runs again.
    await run("net.latency", { host: "127.0.0.1", port: portOf(open), count: 1 }, "app:three");
    clock.advance(60_000);
    await run("net.port", { host: "127.0.0.1", port: portOf(open) }, "app:three");
  });
});

describe("the pseudonymous abuse log", () => {
  it("holds keyed hashes of caller and target, the tool and the outcome; never an address or an id", async () => {
    clock.advance(60_000);
    const before = (await logRows()).length;
    await run("net.port", { host: "127.0.0.1", port: portOf(open) }, "app:logged");
    await refusal("net.port", { host: "localhost", port: portOf(open) }, "app:logged");
    const rows = (await logRows()).slice(before);
    const caller = ctx().clientKeys.pseudonymOf("tools.probe.caller", "app:logged");
    expect(rows).toMatchObject([
      {
        tool: "net.port",
        outcome: "succeeded",
        callerHash: caller,
        targetHash: ctx().clientKeys.pseudonymOf("tools.probe.target", "ip:127.0.0.1"),
      },
      {
        tool: "net.port",
        outcome: "refused",
        callerHash: caller,
        targetHash: ctx().clientKeys.pseudonymOf("tools.probe.target", "host:localhost"),
      },
    ]);
    // Nor do the throttle's counters (the kit's quota_usage) hold a target: they count its keyed hash.
    const counters = await sql(ctx().orm.em.fork(), "select key from {quota_usage} where name = 'tools.probe_target'");
    expect(counters.length).toBeGreaterThan(0);
    const written = JSON.stringify([await logRows(), counters]);
    for (const raw of ["127.0.0.1", "localhost", "app:", "svc:", String(portOf(open))])
      expect(written).not.toContain(raw);
  });
});

describe("ping and traceroute (their programs, run without a shell)", () => {
  let bin: string;
  const realPath = process.env.PATH ?? "";

  beforeAll(async () => {
    bin = await mkdtemp(join(tmpdir(), "pf-probe-bin-"));
    // Stand-ins printing what Debian's iputils ping and traceroute print, recording the arguments they were given.
    await script(
      "ping",
      `if [ "$1" = "-V" ]; then echo "ping from iputils 20221126"; exit 0; fi
cat <<'OUT'
PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.
64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.288 ms
64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time=0.049 ms
64 bytes from 127.0.0.1: icmp_seq=3 ttl=64 time=0.044 ms

--- 127.0.0.1 ping statistics ---
3 packets transmitted, 3 received, 0% packet loss, time 415ms
rtt min/avg/max/mdev = 0.044/0.127/0.288/0.113 ms
OUT`,
    );
    await script(
      "traceroute",
      `if [ "$1" = "-V" ]; then echo "Modern traceroute for Linux, version 2.1.2" >&2; exit 0; fi
cat <<'OUT'
traceroute to 127.0.0.1 (127.0.0.1), 5 hops max, 60 byte packets
 1  10.0.0.1  0.472 ms
 2  *
 3  8.8.4.4  3.120 ms
 4  127.0.0.1  4.001 ms
OUT`,
    );
    process.env.PATH = `${bin}${delimiter}${realPath}`;
  });

  afterAll(async () => {
    process.env.PATH = realPath;
    await rm(bin, { recursive: true, force: true });
  });

  async function script(name: string, body: string) {
    const file = join(bin, name);
    await writeFile(file, `#!/bin/sh\nprintf '%s\\n' "$@" > "$0.args"\n${body}\n`);
    await chmod(file, 0o755);
  }
  const argsOf = async (name: string) => (await readFile(join(bin, `${name}.args`), "utf8")).trim().split("\n");

  it("tells which programs are here: the ones whose output the tools read", async () => {
    expect(await probeBinaries()).toEqual({ "net.ping": true, "net.traceroute": true });
    process.env.PATH = tmpdir();
    try {
      expect(await probeBinaries()).toEqual({ "net.ping": false, "net.traceroute": false });
    } finally {
      process.env.PATH = `${bin}${delimiter}${realPath}`;
    }
  });

  it("net.ping: the checked address and numbers as arguments, the replies read", async () => {
    const answer = await run("net.ping", { host: "127.1", count: 3 });
    expect(answer).toMatchObject({ address: "127.0.0.1", sent: 3, received: 3, loss_percent: 0, min_ms: 0.044 });
    expect(answer.times_ms).toEqual([0.288, 0.049, 0.044]);
    expect(await argsOf("ping")).toEqual(["-n", "-4", "-c", "3", "-i", "0.2", "-W", "2", "-w", "3", "127.0.0.1"]);
  });

  it("net.traceroute: hops read, inside routers without their address", async () => {
    const answer = await run("net.traceroute", { host: "127.0.0.1", max_hops: 5 });
    expect(answer).toMatchObject({ reached: true, complete: true });
    expect(answer.hops).toEqual([
      { hop: 1, answered: true, address: null, ms: 0.472 },
      { hop: 2, answered: false, address: null, ms: null },
      { hop: 3, answered: true, address: "8.8.4.4", ms: 3.12 },
      { hop: 4, answered: true, address: null, ms: 4.001 },
    ]);
    expect(await argsOf("traceroute")).toEqual(["-n", "-4", "-q", "1", "-w", "2", "-m", "5", "127.0.0.1"]);
  });

  it("refuses inside targets before running anything", async () => {
    await rm(join(bin, "ping.args"), { force: true });
    for (const host of ["10.0.0.1", "169.254.169.254", "::1", "localhost"])
      expect(await refusal("net.ping", { host }), host).toMatchObject({ status: 400, code: "tools.target_refused" });
    await expect(readFile(join(bin, "ping.args"))).rejects.toThrow(/ENOENT/);
  });
});

describe("targets and program output, read", () => {
  it("one host is one target however it is written; IPv6 counts by its /64", () => {
    expect(["127.1", "2130706433", "0x7f.0.0.1", "127.0.0.1"].map(normalHost)).toEqual(Array(4).fill("127.0.0.1"));
    expect(normalHost("[2001:DB8:0::1]")).toBe("2001:db8::1");
    expect(normalHost("Example.COM.")).toBe("example.com");
    expect(targetKey("2001:db8:1:2:aaaa::1", "a.example")).toBe(targetKey("2001:db8:1:2:bbbb::9", "b.example"));
    expect(targetKey("2001:db8:1:2::1", "x")).not.toBe(targetKey("2001:db8:1:3::1", "x"));
    expect(targetKey("198.51.100.7", "a.example")).toBe("ip:198.51.100.7");
    expect(targetKey(undefined, "a.example")).toBe("host:a.example");
  });

  it("a ping stopped early: the replies so far, the count asked for as sent", () => {
    const partial =
      "PING 192.0.2.1 (192.0.2.1) 56(84) bytes of data.\n64 bytes from 192.0.2.1: icmp_seq=1 ttl=57 time=11.2 ms\n";
    expect(readPing(partial, 4)).toMatchObject({ sent: 4, received: 1, loss_percent: 75, min_ms: 11.2, max_ms: 11.2 });
    const lost = "4 packets transmitted, 0 received, 100% packet loss, time 3055ms\n";
    expect(readPing(lost, 4)).toMatchObject({ sent: 4, received: 0, loss_percent: 100, avg_ms: null });
    expect(readPing("ping: socket: Operation not permitted\n", 4)).toBeUndefined();
  });

  it("a traceroute that never reached its target", () => {
    const out =
      "traceroute to 8.8.8.8 (8.8.8.8), 3 hops max, 60 byte packets\n 1  100.64.0.1  1.0 ms\n 2  9.9.9.9  2.5 ms !H\n 3  *\n";
    expect(readTraceroute(out, "8.8.8.8")).toEqual({
      reached: false,
      hops: [
        { hop: 1, answered: true, address: null, ms: 1 },
        { hop: 2, answered: true, address: "9.9.9.9", ms: 2.5 },
        { hop: 3, answered: false, address: null, ms: null },
      ],
    });
  });
});
