import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { createRouterTransport, type ConnectRouter, type HandlerContext, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { connect as connectTcp } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { bindingsOf } from "../../gateway/bindings.js";
import { buildGateway, type Gateway } from "../../gateway/gateway.js";
import { openApiDocument, publiclyDocumented } from "../../gateway/openapi.js";
import { CLOSE, WEBSOCKET_MAX_PAYLOAD } from "../../gateway/websocket.js";
import { type ControlFrame, ControlFrameSchema, BotLinkService } from "../../gen/pf/bot/v1/link_service_pb.js";
import { type LinkFrame, LinkFrameSchema } from "../../gen/pf/bot/v1/link_pb.js";
import type { Admission } from "../../services/kit/auth/enforce.js";
import { problem } from "../../services/kit/handler/problem.js";
import { routedTransport, Transports } from "../../services/kit/rpc/clients.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { until } from "../support/until.js";
import { openedSocket, refusedSocket } from "../support/websocket.js";
import { testEnforcement } from "./support.js";

/**
 * The WebSocket bridge (gateway/websocket.ts) over real HTTP with `ws`, generic over descriptors: bot's Link and
 * Control RPCs served by scripted implementations (what a frame asks for, they do), in memory and over gRPC.
 */
const CREDENTIAL = "dcr_good";

/** What the scripted RPCs saw, across calls. */
const seen = {
  /** The calls opened and cancelled, by the request id each client sent. */
  opened: new Set<string>(),
  cancelled: new Set<string>(),
  /** Frames the Link RPC read, in order. */
  received: [] as LinkFrame[],
  /** Messages the flooding Link RPC made. */
  flooded: 0,
  /** The first Control frame (its envelope). */
  control: undefined as ControlFrame | undefined,
  release: () => undefined as void,
};

const frame = (init: MessageInitShape<typeof LinkFrameSchema>["frame"]) => create(LinkFrameSchema, { frame: init });
const command = (name: string, argsJson = "") => frame({ case: "command", value: { id: "cmd_1", name, argsJson } });

function scripted(admission: Admission) {
  return (router: ConnectRouter) =>
    router.service(
      BotLinkService,
      {
        pairDevice: () => ({}),
        async *link(requests: AsyncIterable<LinkFrame>, context: HandlerContext) {
          const id = context.requestHeader.get("x-request-id") ?? "";
          seen.opened.add(id);
          context.signal.addEventListener("abort", () => seen.cancelled.add(id));
          const credential = context.requestHeader.get("x-pf-device-credential");
          if (credential === "dcr_slow")
            await new Promise((resolve) => context.signal.addEventListener("abort", resolve));
          if (credential !== CREDENTIAL)
            throw problem(
              401,
              "bot.device.credential_invalid",
              "The device credential is unknown, revoked or rotated.",
            );
          yield frame({ case: "welcome", value: { deviceId: "dev_1", robotId: "rbt_1", estop: false } });
          for await (const request of requests) {
            seen.received.push(request);
            const { frame: sent } = request;
            if (sent.case === "hello") yield command("hello", sent.value.agentVersion);
            if (sent.case !== "ack") continue;
            const asked = sent.value.jobId;
            if (asked === "end") return;
            if (asked === "fail") throw problem(409, "bot.test_conflict", "The job was taken meanwhile.");
            if (asked === "crash") throw new Error("a bug with internals");
            if (asked === "huge") yield command("huge", "x".repeat(WEBSOCKET_MAX_PAYLOAD));
            if (asked === "hold") await new Promise<void>((resolve) => (seen.release = resolve));
            if (asked === "flood")
              for (seen.flooded = 0; !context.signal.aborted; seen.flooded++)
                yield command("flood", "x".repeat(64 * 1024));
            yield command("ack", asked);
          }
        },
        async *control(requests: AsyncIterable<ControlFrame>) {
          yield create(ControlFrameSchema, { frame: { case: "opened", value: { subject: "usr_1" } } });
          for await (const request of requests) {
            seen.control ??= request;
            if (request.robotId === "") throw problem(400, "request.invalid", "Name the robot.", { field: "robot_id" });
            yield create(ControlFrameSchema, {
              robotId: request.robotId,
              frame: { case: "estop", value: { latched: false } },
            });
          }
        },
      },
      { interceptors: [admission.interceptor()] },
    );
}

let enforcement: Awaited<ReturnType<typeof testEnforcement>>;

async function gatewayOver(transport: Transport, pingMs = 100): Promise<{ gateway: Gateway; url: string }> {
  const gateway = await buildGateway({
    services: [BotLinkService],
    transport,
    admission: enforcement.admission,
    config: loadConfig({
      PF_WS_PING_MS: String(pingMs),
      PF_CALL_TIMEOUT_MS: "1000",
      PF_CORS_ORIGINS: "https://app.example",
    }),
    logger: createLogger("silent"),
    readiness: async () => ({}),
  });
  return { gateway, url: await gateway.listen({ port: 0, host: "127.0.0.1" }) };
}

/** A device's socket with its credential, unless told otherwise. */
const DEVICE = { "x-pf-device-credential": CREDENTIAL };
const opened = (url: string, headers: Record<string, string> = DEVICE, options?: WebSocket.ClientOptions) =>
  openedSocket(url, headers, options);
const refused = (url: string, headers: Record<string, string> = DEVICE) => refusedSocket(url, headers);

let embedded: { gateway: Gateway; url: string };
/** A gateway whose pings are an hour apart: a client may stop reading there without being cut. */
let patient: { gateway: Gateway; url: string };
let linkUrl: string;
let controlUrl: string;

beforeAll(async () => {
  enforcement = await testEnforcement();
  const transport = createRouterTransport(scripted(enforcement.admission));
  embedded = await gatewayOver(transport);
  patient = await gatewayOver(transport, 3_600_000);
  linkUrl = `${embedded.url}/bot/api/v1/devices/link`;
  controlUrl = `${embedded.url}/bot/api/v1/control`;
});
afterAll(async () => {
  await embedded?.gateway.close();
  await patient?.gateway.close();
});

describe("a bidi-streaming RPC bound to GET, as a WebSocket", () => {
  it("is refused before the upgrade with the RPC's problem (401 without the device's credential), never upgraded", async () => {
    const answer = await refused(linkUrl, {});
    expect(answer.status).toBe(401);
    expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(answer.headers["www-authenticate"]).toBe("Bearer");
    expect(answer.body).toMatchObject({ status: 401, code: "bot.device.credential_invalid" });
    const wrong = await refused(linkUrl, { "x-pf-device-credential": "dcr_revoked" });
    expect(wrong.body).toMatchObject({ status: 401, code: "bot.device.credential_invalid" });
    // The RPC refused them: it was called.
    expect(seen.opened).toContain(answer.id);
    expect(seen.opened).toContain(wrong.id);
  });

  it("is refused by admission before the call opens (a forged token), as every route", async () => {
    const answer = await refused(linkUrl, { authorization: "Bearer forged", "x-pf-device-credential": CREDENTIAL });
    expect(answer).toMatchObject({ status: 401, body: { code: "auth.invalid" } });
    // X-PF-* headers the rule does not declare are a service's to send.
    const header = await refused(linkUrl, { "x-pf-subject": "usr_1", "x-pf-device-credential": CREDENTIAL });
    expect(header).toMatchObject({ status: 403, body: { code: "auth.header_refused" } });
    expect(seen.opened).not.toContain(answer.id);
    expect(seen.opened).not.toContain(header.id);
  });

  it("answers a request without an upgrade 426, naming the upgrade", async () => {
    const answer = await fetch(linkUrl, { headers: { "x-pf-device-credential": CREDENTIAL } });
    expect(answer.status).toBe(426);
    expect(answer.headers.get("upgrade")).toBe("websocket");
    expect(await answer.json()).toMatchObject({ code: "request.upgrade_required" });
  });

  it("refuses a page on an origin the route's CORS does not answer (403); the platform's origins and its own pass", async () => {
    const answer = await refused(linkUrl, { origin: "https://evil.example", "x-pf-device-credential": CREDENTIAL });
    expect(answer).toMatchObject({ status: 403, body: { code: "request.origin_refused" } });
    for (const origin of ["https://app.example", embedded.url]) {
      const link = await opened(linkUrl, { origin, "x-pf-device-credential": CREDENTIAL });
      expect(await link.next()).toMatchObject({ welcome: { device_id: "dev_1" } });
      link.socket.close();
    }
  });

  it("upgrades once the RPC's first message is there, sent as the first WebSocket message in proto JSON", async () => {
    const link = await opened(linkUrl);
    expect(await link.next()).toEqual({ welcome: { device_id: "dev_1", robot_id: "rbt_1", estop: false } });
    link.socket.close();
  });

  it("answers 504 when the first message does not come within the call deadline, and cancels the call", async () => {
    const answer = await refused(linkUrl, { "x-pf-device-credential": "dcr_slow" });
    expect(answer).toMatchObject({ status: 504, body: { code: "deadline_exceeded" } });
    await until(() => seen.cancelled.has(answer.id));
  });

  it("carries frames both ways in order, as proto JSON text of the RPC's messages", async () => {
    const link = await opened(linkUrl);
    await link.next();
    const from = seen.received.length;
    link.send({ hello: { agent_version: "1.2.3", classes: ["function"] } });
    expect(await link.next()).toEqual({ command: { id: "cmd_1", name: "hello", args_json: "1.2.3" } });
    for (const job of ["a", "b", "c"]) link.send({ ack: { job_id: job, received_at: "2026-01-02T03:04:05Z" } });
    for (const job of ["a", "b", "c"]) expect(await link.next()).toMatchObject({ command: { args_json: job } });
    expect(seen.received.slice(from).map((each) => each.frame.case)).toEqual(["hello", "ack", "ack", "ack"]);
    link.socket.close();
  });

  it("closes 1000 when the RPC ends, and 4000 + its status naming the problem when it fails", async () => {
    const ends = await opened(linkUrl);
    await ends.next();
    ends.send({ ack: { job_id: "end" } });
    expect(await ends.close()).toEqual({ code: CLOSE.normal, reason: "" });

    const fails = await opened(linkUrl);
    await fails.next();
    fails.send({ ack: { job_id: "fail" } });
    expect(await fails.close()).toEqual({ code: 4409, reason: "bot.test_conflict: The job was taken meanwhile." });

    const crashes = await opened(linkUrl);
    await crashes.next();
    crashes.send({ ack: { job_id: "crash" } });
    const crashed = await crashes.close();
    expect(crashed.code).toBe(4500);
    expect(crashed.reason).toMatch(/^internal: /);
    expect(crashed.reason).not.toContain("bug");
  });

  it("closes 1007 on a frame that is not the message type's proto JSON, 1003 on a binary one, and cancels the call", async () => {
    for (const [bad, field] of [
      ["not json", "frame"],
      ["[1]", "frame"],
      [JSON.stringify({ hello: { agent_version: 7 } }), "hello.agent_version"],
      [JSON.stringify({ nonsense: true }), "nonsense"],
    ]) {
      const link = await opened(linkUrl);
      await link.next();
      link.socket.send(bad);
      const closed = await link.close();
      expect(closed.code, bad).toBe(CLOSE.invalidPayload);
      expect(closed.reason, bad).toMatch(/^request\.invalid: /);
      expect(closed.reason, bad).toContain(field);
      await until(() => seen.cancelled.has(link.id));
    }
    const link = await opened(linkUrl);
    await link.next();
    link.socket.send(Buffer.from("{}"), { binary: true });
    expect(await link.close()).toMatchObject({ code: CLOSE.unsupportedData });
  });

  it("closes 1009 on a message over 1 MiB, from the client (and cancels the call) or from the RPC", async () => {
    const link = await opened(linkUrl);
    await link.next();
    const from = seen.received.length;
    const fits = JSON.stringify({ started: { job_id: "" } });
    // Exactly the limit passes; one byte more does not.
    link.socket.send(JSON.stringify({ started: { job_id: "j".repeat(WEBSOCKET_MAX_PAYLOAD - fits.length) } }));
    await until(() => seen.received.length === from + 1);
    link.socket.send("x".repeat(WEBSOCKET_MAX_PAYLOAD + 1));
    expect(await link.close()).toMatchObject({ code: CLOSE.tooBig });
    await until(() => seen.cancelled.has(link.id));

    const huge = await opened(linkUrl);
    await huge.next();
    huge.send({ ack: { job_id: "huge" } });
    expect(await huge.close()).toMatchObject({ code: CLOSE.tooBig, reason: expect.stringMatching(/^frame_too_large/) });
  });

  it("ends the request stream and cancels the call when the client closes", async () => {
    const link = await opened(linkUrl);
    await link.next();
    const from = seen.received.length;
    link.send({ ack: { job_id: "a" } });
    await link.next();
    link.socket.close(1000);
    await until(() => seen.cancelled.has(link.id));
    expect(seen.received.length).toBe(from + 1);
  });

  it("closes every socket 1001 when the gateway closes, cancelling the calls", async () => {
    const closing = await gatewayOver(createRouterTransport(scripted(enforcement.admission)));
    const link = await opened(`${closing.url}/bot/api/v1/devices/link`);
    await link.next();
    await closing.gateway.close();
    expect(await link.close()).toEqual({ code: CLOSE.goingAway, reason: "The gateway is closing." });
    await until(() => seen.cancelled.has(link.id));
  });

  it("pings every interval and cuts a client that stops answering, cancelling its call", async () => {
    const lively = await opened(linkUrl);
    let pings = 0;
    lively.socket.on("ping", () => pings++);
    const silent = await opened(linkUrl, undefined, { autoPong: false });
    await lively.next();
    await silent.next();
    // Cut at the second ping it left unanswered; the lively one stays.
    expect(await silent.close()).toMatchObject({ code: 1006 });
    await until(() => seen.cancelled.has(silent.id));
    await until(() => pings >= 3);
    expect(lively.closed).toBeUndefined();
    lively.socket.close();
  });

  it("reads the RPC only as fast as the client takes its messages", async () => {
    const link = await opened(`${patient.url}/bot/api/v1/devices/link`);
    await link.next();
    // The client reads nothing more: only socket buffers and the bridge's own bound can fill.
    link.socket.pause();
    link.send({ ack: { job_id: "flood" } });
    // Another link's pings (100 ms apart) mark time passing in the process.
    const clock = await opened(linkUrl);
    let pings = 0;
    clock.socket.on("ping", () => pings++);
    await until(() => pings >= 5);
    const produced = seen.flooded;
    // Unbounded, the in-memory RPC would have made thousands of 64 KiB messages by now.
    expect(produced).toBeLessThan(400);
    const then = pings;
    await until(() => pings >= then + 3);
    expect(seen.flooded - produced).toBeLessThan(5);
    link.socket.resume();
    await until(() => link.messages.length > produced);
    link.socket.terminate();
    clock.socket.close();
  });

  it("stops reading the socket while the RPC does not take the client's frames", async () => {
    const link = await opened(linkUrl);
    await link.next();
    const from = seen.received.length;
    link.send({ ack: { job_id: "hold" } });
    await until(() => seen.received.length === from + 1);
    // 16 MiB of frames the RPC does not read yet.
    const pad = "x".repeat(32 * 1024);
    for (let job = 0; job < 512; job++) link.send({ ack: { job_id: `j${job}${pad}` } });
    const clock = await opened(linkUrl);
    let pings = 0;
    clock.socket.on("ping", () => pings++);
    await until(() => pings >= 5);
    // Most of it still waits on the client's side: the gateway stopped reading.
    expect(link.socket.bufferedAmount).toBeGreaterThan(8 * 1024 * 1024);
    expect(seen.received.length).toBe(from + 1);
    seen.release();
    await until(() => link.messages.length === 1 + 512 + 1, 60_000);
    expect(
      seen.received.slice(from + 1).map((each) => (each.frame.value as { jobId: string }).jobId.slice(0, 4)),
    ).toEqual(Array.from({ length: 512 }, (_, job) => `j${job}`.padEnd(4, "x")));
    expect(link.socket.bufferedAmount).toBe(0);
    link.socket.close();
    clock.socket.close();
  });
});

describe("the operator channel: query parameters make the first frame's envelope", () => {
  it("admits as the route's rule says before the call opens (401 without a token)", async () => {
    expect(await refused(`${controlUrl}?robot_id=rbt_1`, {})).toMatchObject({
      status: 401,
      body: { code: "auth.required" },
    });
  });

  it("sends the query as the first frame's envelope, before any frame of the client's", async () => {
    const token = await enforcement.token({ kind: "service", svc: "app", caps: ["bot.robot.control"] });
    const headers = { authorization: `Bearer ${token}`, "x-pf-subject": "usr_1" };
    seen.control = undefined;
    const named = await opened(`${controlUrl}?robot_id=rbt_7`, headers);
    expect(await named.next()).toEqual({ robot_id: "", opened: { subject: "usr_1" } });
    expect(await named.next()).toEqual({ robot_id: "rbt_7", estop: { latched: false } });
    expect(seen.control).toMatchObject({ robotId: "rbt_7", frame: { case: undefined } });
    named.socket.close();
    // Without a query nothing is sent for the client: its own first frame names the robot.
    seen.control = undefined;
    const unnamed = await opened(controlUrl, headers);
    await unnamed.next();
    expect(seen.control).toBeUndefined();
    unnamed.send({ robot_id: "rbt_8" });
    expect(await unnamed.next()).toEqual({ robot_id: "rbt_8", estop: { latched: false } });
    unnamed.socket.close();
    // What a frame is comes in frames, never from the query.
    expect(await refused(`${controlUrl}?robot_id=rbt_7&command.name=go`, headers)).toMatchObject({
      status: 400,
      body: { code: "request.invalid", field: "command.name" },
    });
  });
});

describe("split: the gateway in front of the RPC in another process, over gRPC (HTTP/2)", () => {
  let server: http2.Http2Server;
  let split: { gateway: Gateway; url: string };
  beforeAll(async () => {
    server = http2.createServer(connectNodeAdapter({ routes: scripted(enforcement.admission) }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const unused = createRouterTransport(() => undefined);
    split = await gatewayOver(routedTransport(new Transports(unused, new Set(), { bot: rpcUrl }, [])));
  });
  afterAll(async () => {
    await split?.gateway.close();
    server?.close();
  });

  it("refuses before the upgrade, then streams frames both ways as they come", async () => {
    const url = `${split.url}/bot/api/v1/devices/link`;
    expect(await refused(url, {})).toMatchObject({ status: 401, body: { code: "bot.device.credential_invalid" } });
    const link = await opened(url);
    expect(await link.next()).toMatchObject({ welcome: { device_id: "dev_1" } });
    // Each answer needs its frame to have arrived: a buffered request stream would never answer.
    for (const job of ["a", "b"]) {
      link.send({ ack: { job_id: job } });
      expect(await link.next()).toMatchObject({ command: { args_json: job } });
    }
    link.socket.close();
    await until(() => seen.cancelled.has(link.id));
  });
});

describe("an upgrade asked of a route that is no WebSocket", () => {
  it("is answered over HTTP, and its connection ends with the answer", async () => {
    const { port } = new URL(embedded.url);
    for (const path of ["/healthz", "/nowhere"]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connectTcp(Number(port), "127.0.0.1", () =>
          socket.write(
            `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
              "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
          ),
        );
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        // The server ends the connection: without that this never settles.
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      });
      expect(answer, path).toMatch(/^HTTP\/1\.1 (200|404) /);
      expect(answer.toLowerCase(), path).toContain("connection: close");
    }
  });
});

describe("OpenAPI of a WebSocket route", () => {
  const document = openApiDocument(bindingsOf(BotLinkService), { title: "pf bot", basePath: "/bot" }) as {
    paths: Record<
      string,
      Record<string, JsonObject & { parameters: JsonObject[]; responses: Record<string, JsonObject> }>
    >;
  };

  it("documents a GET answering 101 Switching Protocols, the messages of each side, the upgrade and the problems", () => {
    const link = document.paths["/api/v1/devices/link"].get;
    expect(Object.keys(link.responses)).toEqual(["101", "400", "401", "403", "426", "429", "504", "default"]);
    expect(link.responses["101"]).toMatchObject({ description: expect.stringMatching(/^Switching Protocols/) });
    expect(link["x-pf-websocket"]).toEqual({
      "client-messages": { $ref: "#/components/schemas/pf.bot.v1.LinkFrame" },
      "server-messages": { $ref: "#/components/schemas/pf.bot.v1.LinkFrame" },
      "max-message-bytes": WEBSOCKET_MAX_PAYLOAD,
    });
    expect(link.parameters).toEqual([
      expect.objectContaining({ name: "x-pf-device-credential", in: "header" }),
      expect.objectContaining({ name: "Upgrade", in: "header", required: true, example: "websocket" }),
    ]);
    const codes = (status: string) => (link.responses[status] as JsonObject)["x-pf-problem-codes"];
    expect(codes("401")).toContain("bot.device.credential_invalid");
    expect(codes("403")).toContain("request.origin_refused");
    expect(codes("426")).toEqual(["request.upgrade_required"]);
    expect(codes("504")).toEqual(["deadline_exceeded"]);
    // The query sets the first frame's envelope only, never what a frame is.
    const control = document.paths["/api/v1/control"].get;
    expect(control.parameters.filter((each) => each.in === "query").map((each) => each.name)).toEqual(["robot_id"]);
    expect(link.parameters.filter((each) => each.in === "query")).toEqual([]);
  });

  it("passes Redocly's recommended rules with no error, read with a service token or without", async () => {
    const config = await createConfig({
      extends: ["recommended"],
      rules: { "no-invalid-media-type-examples": "error", "no-invalid-parameter-examples": "error" },
    });
    const bindings = bindingsOf(BotLinkService);
    for (const documented of [bindings, bindings.filter(publiclyDocumented)]) {
      const source = JSON.stringify(openApiDocument(documented, { title: "pf bot", basePath: "/bot" }));
      const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
      expect(problems.filter((each) => each.severity === "error").map((each) => each.message)).toEqual([]);
    }
  });
});
