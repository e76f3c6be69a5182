import { createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { freePorts } from "../support/ports.js";
import { liveStream, PUBLIC_ADDRESS, resolveAs, restreamContext } from "./support/destinations.js";

// Destinations must reach only the public internet: literal addresses and local names are refused when written; a
// name is resolved and judged again each time an output starts or the destination is tested (DNS may have changed).
// No test here connects to a refused address: the resolver is a stub, and the only connections made are to a
// server of this file on loopback, which the test-only PF_FETCH_ALLOW_HOSTS lists.
describe("destinations and the SSRF guard", () => {
  let t: TestPlatform;
  let server: Server;
  let port: number;
  let closedPort: number;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    port = (server.address() as AddressInfo).port;
    [closedPort] = await freePorts(1);
    t = await startTestPlatform({
      services: ["restream"],
      env: { PF_FETCH_ALLOW_HOSTS: `127.0.0.1:${port},127.0.0.1:${closedPort}`, PF_RESTREAM_TEST_TIMEOUT_MS: "3000" },
    });
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await new Promise((done) => server?.close(done));
  });

  const INTERNAL: Record<string, string> = {
    "loop.example.com": "127.0.0.1",
    "private.example.com": "10.0.0.1",
    "metadata.example.com": "169.254.169.254",
    "mapped.example.com": "::ffff:127.0.0.1",
    "cgnat.example.com": "100.64.0.1",
  };

  it("refuses literal internal addresses and local names at create (400 restream.destination_invalid, url)", async () => {
    resolveAs(t, INTERNAL);
    const { owner, stream } = await liveStream(t);
    for (const host of [
      "127.0.0.1",
      "10.0.0.1",
      "169.254.169.254",
      "[::ffff:127.0.0.1]",
      "100.64.0.1",
      "[::1]",
      "2130706433",
      "0x7f.1",
      "localhost",
      "media.localhost",
      "printer.local",
      "db.internal",
      `127.0.0.1:${port + 1}`,
    ]) {
      const answer = await owner.call("POST", `/streams/${stream.id}/destinations`, {
        url: `rtmp://${host}/app`,
        stream_key: "k-1234567890",
      });
      expect(answer.body, host).toMatchObject({ status: 400, code: "restream.destination_invalid", field: "url" });
    }
    expect((await owner.call("GET", `/streams/${stream.id}/destinations`)).body.destinations ?? []).toEqual([]);
    expect(connections).toBe(0);
  });

  it("refuses names resolving inward at start and at test, connecting nowhere", async () => {
    resolveAs(t, INTERNAL);
    const { owner, destination, open } = await liveStream(t);
    await open();
    for (const name of Object.keys(INTERNAL)) {
      // A name is taken at write (what it resolves to is judged when it is used) …
      const id = await destination({ url: `rtmp://${name}:${port}/app` });
      // … and refused when an output starts …
      const started = await owner.call("POST", `/destinations/${id}/start`, {});
      expect(started.body, name).toMatchObject({ status: 400, code: "restream.destination_invalid", field: "url" });
      // … or the destination is tested.
      const tested = await owner.call("POST", `/destinations/${id}/test`, {});
      expect(tested.status).toBe(200);
      expect(tested.body.test.ok ?? false).toBe(false);
      expect(tested.body.test.reason, name).toMatch(/^refused_address: .* is a .*address/);
      expect(tested.body.destination.last_test).toMatchObject({ reason: tested.body.test.reason });
    }
    expect(connections).toBe(0);
  });

  it("judges the name again at each start: DNS rebound to an internal address is refused", async () => {
    let answer = PUBLIC_ADDRESS;
    resolveAs(t, { "rebind.example.com": () => answer });
    const { owner, destination, open } = await liveStream(t);
    const sessionId = await open();
    const id = await destination({ url: "rtmp://rebind.example.com/app" });
    const first = await owner.call("POST", `/destinations/${id}/start`, {});
    expect(first.body).toMatchObject({ changed: true, output: { state: "starting", session_id: sessionId } });
    expect((await owner.call("POST", `/destinations/${id}/stop`, {})).body.changed).toBe(true);

    answer = "169.254.169.254";
    const again = await owner.call("POST", `/destinations/${id}/start`, {});
    expect(again.body).toMatchObject({ status: 400, code: "restream.destination_invalid" });
    const outputs = await owner.call("GET", `/sessions/${sessionId}/outputs`);
    expect(outputs.body.outputs.map((o: { state: string }) => o.state)).toEqual(["stopped"]);
  });

  it("refuses a start whose destination changed while its host was judged (409 restream.destination_changed)", async () => {
    resolveAs(t);
    const { owner, destination, open } = await liveStream(t);
    const sessionId = await open();
    const id = await destination({ url: "rtmp://judged.example.com/app" });
    const outbound = restreamContext(t).outbound;
    const resolve = outbound.resolve!;
    // The owner points it elsewhere while the start's lookup of the old host is under way.
    outbound.resolve = async (host, ...rest) => {
      if (host === "judged.example.com") {
        const moved = await owner.call("PATCH", `/destinations/${id}`, { url: "rtmp://moved.example.com/app" });
        expect(moved.status).toBe(200);
      }
      return resolve(host, ...rest);
    };
    const started = await owner.call("POST", `/destinations/${id}/start`, {});
    outbound.resolve = resolve;
    expect(started.body).toMatchObject({ status: 409, code: "restream.destination_changed" });
    expect((await owner.call("GET", `/sessions/${sessionId}/outputs`)).body.outputs ?? []).toEqual([]);
    const again = await owner.call("POST", `/destinations/${id}/start`, {});
    expect(again.body).toMatchObject({ changed: true, output: { state: "starting" } });
  });

  it("fails an auto-started output whose name resolves inward, with the reason in its logs", async () => {
    resolveAs(t, INTERNAL);
    const { owner, destination, worker, stream } = await liveStream(t, { settings: { autoStartOutputs: true } });
    const refused = await destination({ url: "rtmp://metadata.example.com/app" });
    const allowed = await destination({ url: "rtmp://live.example.com/app", stream_key: "public-key-0001" });
    const grant = await worker.authorize(stream.key);
    expect(grant.outputs.map((o) => o.url)).toEqual(["rtmp://live.example.com/app/public-key-0001"]);
    const outputs = (await owner.call("GET", `/sessions/${grant.sessionId}/outputs`)).body.outputs;
    expect(outputs).toEqual([
      expect.objectContaining({ destination_id: refused, state: "failed", reason: "destination_refused" }),
      expect.objectContaining({ destination_id: allowed, state: "starting" }),
    ]);
    const logs = await owner.call("GET", `/destinations/${refused}/logs`);
    expect(logs.body.logs[0].text).toMatch(
      /^destination refused \(refused_address\): metadata\.example\.com is a linkLocal/,
    );
  });

  it("tests a destination the test-only setting allows on loopback: a TCP connection, kept as last_test", async () => {
    resolveAs(t);
    const { owner, destination } = await liveStream(t);
    const id = await destination({ url: `rtmp://127.0.0.1:${port}/app` });
    const tested = await owner.call("POST", `/destinations/${id}/test`, {});
    expect(tested.status).toBe(200);
    expect(tested.body.test).toMatchObject({ ok: true });
    expect(tested.body.test.at).toBeDefined();
    expect(connections).toBe(1);
    const listed = (await owner.call("GET", `/streams/${tested.body.destination.stream_id}/destinations`)).body;
    expect(listed.destinations[0].last_test).toMatchObject({ ok: true, at: tested.body.test.at });

    const closed = await destination({ url: `rtmp://127.0.0.1:${closedPort}/app` });
    const refused = await owner.call("POST", `/destinations/${closed}/test`, {});
    expect(refused.body.test.ok ?? false).toBe(false);
    expect(refused.body.test.reason).toBe("connect: ECONNREFUSED");
  });

  it("answers dns when the name does not resolve", async () => {
    resolveAs(t, {
      "gone.example.com": () => {
        throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
      },
    });
    const { owner, destination, open } = await liveStream(t);
    await open();
    const id = await destination({ url: "rtmps://gone.example.com/app" });
    const tested = await owner.call("POST", `/destinations/${id}/test`, {});
    expect(tested.body.test.reason).toMatch(/^dns: gone\.example\.com does not resolve/);
    const started = await owner.call("POST", `/destinations/${id}/start`, {});
    expect(started.body).toMatchObject({ status: 400, code: "restream.destination_invalid" });
  });
});
