import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createRouterTransport,
  type HandlerContext,
  type Transport,
} from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { execFile } from "node:child_process";
import { request as httpRequest } from "node:http";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import {
  PasteCreateRequestSchema,
  PasteCreateResultSchema,
  PasteService,
} from "../../gen/pf/community/v1/pastes_pb.js";
import { PulseService } from "../../gen/pf/community/v1/pulse_pb.js";
import { RelayService } from "../../gen/pf/community/v1/relays_pb.js";
import { buildGateway } from "../../gateway/gateway.js";
import { MediaService } from "../../gen/pf/media/v1/media_pb.js";
import { OverlayEventSchema, TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
import type { Implementation } from "../../services/kit/rpc/implementation.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { usePlatform } from "../support/platform.js";
import { person } from "../community/support.js";
import { untilPast } from "../support/until.js";
import { admitEveryone } from "./support.js";

const ORIGIN = "https://app.example";
const PULSE_ORIGIN = "https://pulse.example";
const t = usePlatform({
  services: ["community"],
  // Standing still: the rate limits count in windows aligned to the minute, which a real clock may cross mid-test.
  clock: new ManualClock(new Date("2026-11-28T12:00:10Z")),
  env: {
    PF_CORS_ORIGINS: ORIGIN,
    PF_COMMUNITY_PULSE_ORIGINS: PULSE_ORIGIN,
    PF_COMMUNITY_ANONYMOUS_READS_PER_MINUTE: "10",
    PF_BODY_LIMIT: "65536",
  },
});

/** Connect and gRPC-Web over HTTP/1.1 against the gateway's own URL, as a browser's fetch would call it. */
const transports: [string, () => Transport][] = [
  ["Connect", () => createConnectTransport({ baseUrl: t.gatewayUrl, httpVersion: "1.1" })],
  ["gRPC-Web", () => createGrpcWebTransport({ baseUrl: t.gatewayUrl, httpVersion: "1.1" })],
];
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const codeOf = (call: Promise<unknown>) =>
  call.then(
    () => "answered",
    (error: unknown) => Code[ConnectError.from(error).code],
  );

let owner: string;
let ownerToken: string;

beforeAll(async () => {
  owner = person("cx");
  ownerToken = await t.token({ kind: "user", sub: owner });
});

describe.each(transports)("%s on the gateway's port", (name, transport) => {
  it("an authenticated RPC creates, a public one reads it anonymously, through the same handlers as JSON", async () => {
    const pastes = createClient(PasteService, transport());
    const { paste } = await pastes.createPaste({ title: `Connect ${name}`, body: "hello" }, bearer(ownerToken));
    expect(paste).toMatchObject({ owner, title: `Connect ${name}` });
    const read = await pastes.getPaste({ slug: paste!.slug });
    expect(read.paste?.id).toBe(paste!.id);
    // The JSON route sees the same paste.
    expect((await t.http("GET", `/community/api/pastes/${paste!.slug}`)).body.paste.id).toBe(paste!.id);
  });

  it("a server stream answers its messages", async () => {
    const pastes = createClient(PasteService, transport());
    const { paste } = await pastes.createPaste({ title: "Streamed", body: "line one" }, bearer(ownerToken));
    const parts: Uint8Array[] = [];
    for await (const message of pastes.getRawPaste({ slug: paste!.slug })) parts.push(message.body!.data);
    expect(Buffer.concat(parts).toString()).toBe("line one");
  });

  it("refuses as the RPC port does: no token, a forged one, a capability the token lacks", async () => {
    const pastes = createClient(PasteService, transport());
    const draft = { title: "Refused", body: "x" };
    expect(await codeOf(pastes.createPaste(draft))).toBe("Unauthenticated");
    expect(await codeOf(pastes.createPaste(draft, bearer("not.a.token")))).toBe("Unauthenticated");
    const reader = await t.token({ kind: "service", svc: "web", caps: ["community.paste.read"] });
    const refused = await pastes
      .createPaste(draft, { headers: { authorization: `Bearer ${reader}`, "x-pf-subject": owner } })
      .catch((error: unknown) => ConnectError.from(error));
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.PermissionDenied);
    // The problem the JSON route answers rides along as the error's detail.
    expect((refused as ConnectError).rawMessage).toMatch(/capabilit/i);
  });

  it("serves no internal RPC: those stay on the RPC port", async () => {
    const service = await t.token({ kind: "service", svc: "web", caps: ["community.relay.manage"] });
    const relays = createClient(RelayService, transport());
    expect(await codeOf(relays.listRelays({}, bearer(service)))).toBe("Unimplemented");
  });
});

describe("buf curl against the gateway's URL", () => {
  it("calls over Connect and gRPC-Web with the schema from the repository's protos (reflection is on the RPC port)", async () => {
    const pastes = createClient(PasteService, transports[0][1]());
    const { paste } = await pastes.createPaste({ title: "Curled", body: "x" }, bearer(ownerToken));
    for (const protocol of ["connect", "grpcweb"]) {
      const { stdout } = await promisify(execFile)(
        "npx",
        [
          "buf",
          "curl",
          "--schema",
          ".",
          "--protocol",
          protocol,
          "-d",
          JSON.stringify({ slug: paste!.slug }),
          `${t.gatewayUrl}/${PasteService.typeName}/GetPaste`,
        ],
        { timeout: 60_000 },
      );
      expect(JSON.parse(stdout).paste.id).toBe(paste!.id);
    }
  }, 60_000);
});

describe("limits and headers as the JSON routes have them", () => {
  it("a message over PF_BODY_LIMIT is refused before the handler runs", async () => {
    const pastes = createClient(PasteService, transports[0][1]());
    const call = pastes.createPaste({ title: "Big", body: "x".repeat(70_000) }, bearer(ownerToken));
    expect(await codeOf(call)).toBe("ResourceExhausted");
  });

  it("anonymous reads count against the same per-address limit as the JSON routes", async () => {
    const pastes = createClient(PasteService, transports[0][1]());
    const { paste } = await pastes.createPaste({ title: "Counted", body: "x" }, bearer(ownerToken));
    // 10 a minute (PF_COMMUNITY_ANONYMOUS_READS_PER_MINUTE), on a standing clock: the JSON route uses them up.
    let json = 0;
    for (let read = 0; read <= 10 && json !== 429; read++)
      json = (await t.http("GET", `/community/api/pastes/${paste!.slug}`)).status;
    expect(json).toBe(429);
    expect(await codeOf(pastes.getPaste({ slug: paste!.slug }))).toBe("ResourceExhausted");
    // The address is the connection's: one a client names is not taken.
    const named = pastes.getPaste({ slug: paste!.slug }, { headers: { "pf-client-ip": "203.0.113.9" } });
    expect(await codeOf(named)).toBe("ResourceExhausted");
  });

  it("answers the request id, and CORS for the platform's origins with the Connect and gRPC-Web headers", async () => {
    const path = `/${PasteService.typeName}/CreatePaste`;
    const preflight = await fetch(t.gatewayUrl + path, {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "connect-protocol-version,x-grpc-web,x-user-agent,authorization",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const allowed = preflight.headers.get("access-control-allow-headers")!.toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining([
        "connect-protocol-version",
        "x-grpc-web",
        "x-user-agent",
        "authorization",
        "x-pf-subject",
      ]),
    );
    // Another origin gets no CORS answer, as on the JSON routes.
    const stranger = await fetch(t.gatewayUrl + path, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(stranger.headers.get("access-control-allow-origin")).toBeNull();

    const answer = await fetch(t.gatewayUrl + path, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json", "x-request-id": "connect-req-1" },
      body: "{}",
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("x-request-id")).toBe("connect-req-1");
    expect(answer.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const exposed = answer.headers.get("access-control-expose-headers")!.toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["grpc-status", "grpc-message", "x-request-id"]));
    expect(await answer.json()).toMatchObject({ code: "unauthenticated" });
  });

  it("a route with its own allow-list answers its origins only, as its JSON route does", async () => {
    const asks = (origin: string) =>
      fetch(`${t.gatewayUrl}/${PulseService.typeName}/GetPulse`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST" },
      }).then((answer) => answer.headers.get("access-control-allow-origin"));
    expect(await asks(PULSE_ORIGIN)).toBe(PULSE_ORIGIN);
    expect(await asks(ORIGIN)).toBeNull();
  });
});

describe("gRPC over the gateway's HTTP/1.1", () => {
  /** One unary gRPC call by hand: HTTP/1.1 with chunked trailers, which few gRPC clients speak. */
  function grpcCall(path: string, message: Uint8Array, token?: string) {
    const frame = Buffer.alloc(5 + message.length);
    frame.writeUInt32BE(message.length, 1);
    frame.set(message, 5);
    return new Promise<{ status: number; body: Buffer; grpc: Record<string, string | undefined> }>(
      (resolve, reject) => {
        const sent = httpRequest(t.gatewayUrl + path, {
          method: "POST",
          headers: {
            "content-type": "application/grpc+proto",
            te: "trailers",
            ...(token && { authorization: `Bearer ${token}` }),
          },
        });
        sent.on("response", (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => {
            const status = response.trailers["grpc-status"] ?? (response.headers["grpc-status"] as string | undefined);
            const text = response.trailers["grpc-message"] ?? (response.headers["grpc-message"] as string | undefined);
            resolve({ status: response.statusCode!, body: Buffer.concat(chunks), grpc: { status, message: text } });
          });
        });
        sent.on("error", reject);
        sent.end(frame);
      },
    );
  }

  it("answers with its status in HTTP/1.1 trailers, refusals as trailers-only", async () => {
    const path = `/${PasteService.typeName}/CreatePaste`;
    const input = toBinary(
      PasteCreateRequestSchema,
      create(PasteCreateRequestSchema, { title: "Over gRPC", body: "x" }),
    );
    const refused = await grpcCall(path, input);
    expect(refused.grpc.status).toBe(String(Code.Unauthenticated));
    const made = await grpcCall(path, input, ownerToken);
    expect(made.grpc.status).toBe("0");
    const result = fromBinary(PasteCreateResultSchema, made.body.subarray(5));
    expect(result.paste?.owner).toBe(owner);
  });
});

describe("the gateway alone, with handlers of its own", () => {
  /** A gateway serving these handlers over Connect, with everyone admitted; answers its URL and how to close it. */
  async function gatewayServing(implementations: Implementation[], env: Record<string, string> = {}) {
    const gateway = await buildGateway({
      services: implementations.map((each) => each.service),
      transport: createRouterTransport(() => undefined),
      admission: admitEveryone,
      config: loadConfig(env),
      logger: createLogger("silent"),
      readiness: async () => ({}),
      connect: { implementations, interceptors: [] },
    });
    return { gateway, baseUrl: await gateway.listen({ port: 0, host: "127.0.0.1" }) };
  }

  it("reads a client stream as it arrives, past the body deadline of one message", async () => {
    const impl = {
      async uploadFile(requests: AsyncIterable<{ chunk: Uint8Array }>) {
        let size = 0;
        for await (const request of requests) size += request.chunk.length;
        return { name: "upload", size: BigInt(size) };
      },
    };
    const { gateway, baseUrl } = await gatewayServing([{ service: MediaService, impl: impl as never }], {
      PF_BODY_TIMEOUT_MS: "300",
    });
    try {
      const media = createClient(MediaService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
      const started = Date.now();
      async function* upload() {
        yield { app: "app_x", name: "a.txt", chunk: new Uint8Array(3) };
        // The body is still arriving when a one-message request would have been refused (408).
        await untilPast(started + 900);
        yield { chunk: new Uint8Array(4) };
      }
      expect(await media.uploadFile(upload())).toMatchObject({ size: 7n });
    } finally {
      await gateway.close();
    }
  });

  it("ends its open server streams at once when it closes, instead of waiting out its grace period", async () => {
    let aborted = false;
    const impl = {
      async *openOverlayStream(_request: unknown, context: HandlerContext) {
        yield create(OverlayEventSchema, { event: { case: "opened", value: {} } });
        await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
        aborted = true;
      },
    };
    const { gateway, baseUrl } = await gatewayServing([{ service: TipsOverlayService, impl: impl as never }]);
    const overlays = createClient(TipsOverlayService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const stream = overlays.openOverlayStream({ token: "x" })[Symbol.asyncIterator]();
    expect((await stream.next()).value).toMatchObject({ event: { case: "opened" } });
    const started = Date.now();
    await gateway.close();
    expect(await stream.next()).toMatchObject({ done: true });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(aborted).toBe(true);
  });
});
