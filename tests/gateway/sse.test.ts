import { create, createRegistry } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createRouterTransport, type HandlerContext } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { get, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BODY_HOOKS } from "../../gateway/bodies.js";
import { buildGateway } from "../../gateway/gateway.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import type { Binding } from "../../gateway/bindings.js";
import { registerBindings } from "../../gateway/routes.js";
import { parseTemplate } from "../../gateway/template.js";
import {
  Health,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { OverlayEventSchema, OverlayKind, TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { problem } from "../../services/kit/handler/problem.js";
import { openEventStream } from "../support/sse.js";
import { until } from "../support/until.js";
import { admitEveryone } from "./support.js";

/**
 * The gateway's text/event-stream serving, generic over descriptors: bindings
 * made by hand for two server-streaming RPCs — Health.Watch (no `id` field, no
 * `event` oneof) and the overlay stream's descriptor (both) — served by
 * in-memory implementations, read over real HTTP.
 */
const binding = (
  service: typeof Health | typeof TipsOverlayService | typeof ServerReflection,
  method: Binding["method"],
  path: string,
): Binding => ({
  key: "t",
  service,
  method,
  verb: "GET",
  template: parseTemplate(path),
  body: "",
});

const seen: { lastEventId?: string | null; aborted?: boolean; waiting?: boolean; flooded?: number } = {};

/** Waits until the RPC's signal aborts (the client went away) and notes it. */
function untilAborted(context: HandlerContext): Promise<void> {
  return new Promise((resolve) =>
    context.signal.addEventListener("abort", () => {
      seen.aborted = true;
      resolve();
    }),
  );
}

const transport = createRouterTransport((router) => {
  router.service(Health, {
    check: () => create(HealthCheckResponseSchema),
    async *watch(request, context) {
      if (request.service === "refused") throw problem(403, "test.refused", "Not this one.");
      if (request.service === "slow") {
        seen.waiting = true;
        await untilAborted(context);
      }
      if (request.service === "empty") return;
      yield { status: HealthCheckResponse_ServingStatus.SERVING };
      if (request.service === "fails") throw problem(409, "test.later", "Failed after the first event.");
      if (request.service === "crashes") throw new Error("a bug with internals");
      if (request.service === "quiet") await untilAborted(context);
      if (request.service === "ends") return;
      yield { status: HealthCheckResponse_ServingStatus.NOT_SERVING };
    },
  });
  router.service(TipsOverlayService, {
    async *openOverlayStream(request: { token: string }, context: HandlerContext) {
      if (request.token === "flood") {
        // As many large events as the gateway asks for.
        const name = "x".repeat(256 * 1024);
        for (seen.flooded = 0; !context.signal.aborted; seen.flooded++)
          yield create(OverlayEventSchema, { event: { case: "config", value: { id: "ovc_1", name } } });
        return;
      }
      seen.lastEventId = context.requestHeader.get("last-event-id");
      yield create(OverlayEventSchema, {
        id: "",
        event: { case: "config", value: { id: "ovc_1", kind: OverlayKind.ALERTS, revision: 2n } },
      });
      yield create(OverlayEventSchema, {
        id: "evt_2",
        occurredAt: timestampFromDate(new Date("2026-11-22T10:00:00Z")),
        event: { case: "alertRemoved", value: { interactionId: "int_1" } },
      });
    },
  } as never);
}, {});

let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  app = Fastify();
  registerBindings(
    app,
    [
      binding(Health, Health.method.watch, "/watch/{service}"),
      binding(TipsOverlayService, TipsOverlayService.method.openOverlayStream, "/overlay"),
      { ...binding(ServerReflection, ServerReflection.method.serverReflectionInfo, "/reflect"), verb: "POST" },
    ],
    {},
    {
      transport,
      admission: admitEveryone,
      timeoutMs: 50,
      registry: createRegistry(),
      logger: createLogger("silent"),
      heartbeatMs: 100,
    },
  );
  await app.listen({ port: 0, host: "127.0.0.1" });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/t`;
});
afterAll(() => app.close());

describe("server-streaming RPCs as text/event-stream", () => {
  it("are claimed by the event-stream hook; bidi streaming bound to GET is a WebSocket, otherwise 501 route.streaming_unsupported", async () => {
    const claimed = (b: Binding) => BODY_HOOKS.filter((hook) => hook.claims(b)).map((hook) => hook.name);
    expect(claimed(binding(Health, Health.method.watch, "/w"))).toEqual(["server-streaming-events"]);
    const reflection = binding(ServerReflection, ServerReflection.method.serverReflectionInfo, "/r");
    expect(claimed(reflection)).toEqual(["websocket", "streaming-not-served"]);
    expect(claimed({ ...reflection, verb: "POST" })).toEqual(["streaming-not-served"]);
    const answer = await fetch(`${url}/reflect`, { method: "POST" });
    expect(answer.status).toBe(501);
    expect(await answer.json()).toMatchObject({ code: "route.streaming_unsupported" });
  });

  it("send each message as one data: line of proto JSON (snake_case), then end with the RPC", async () => {
    const opened = await openEventStream(`${url}/watch/ok`);
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(opened.headers.get("cache-control")).toBe("no-store");
    const stream = opened.stream!;
    expect(await stream.next()).toEqual({ event: "message", data: { status: "SERVING" } });
    expect(await stream.next()).toEqual({ event: "message", data: { status: "NOT_SERVING" } });
    expect(await stream.next()).toBeUndefined();
    expect(stream.ended).toBe(true);
  });

  it("take id: from the message's `id` field and event: from its `event` oneof; an event without an id has no id: line", async () => {
    const stream = (await openEventStream(`${url}/overlay`)).stream!;
    const first = await stream.next();
    expect(first).toMatchObject({
      event: "config",
      data: { id: "", config: { id: "ovc_1", kind: "OVERLAY_KIND_ALERTS", revision: "2" } },
    });
    expect(first?.id).toBeUndefined();
    expect(await stream.next()).toEqual({
      id: "evt_2",
      event: "alert_removed",
      data: { id: "evt_2", occurred_at: "2026-11-22T10:00:00Z", alert_removed: { interaction_id: "int_1" } },
    });
  });

  it("forward Last-Event-ID to the RPC", async () => {
    const stream = (await openEventStream(`${url}/overlay`, { "last-event-id": "evt_1" })).stream!;
    await stream.next();
    expect(seen.lastEventId).toBe("evt_1");
    await stream.close();
  });

  it("answer a problem before the first message as problem+json with its status", async () => {
    const opened = await openEventStream(`${url}/watch/refused`);
    expect(opened.status).toBe(403);
    expect(opened.headers.get("content-type")).toContain("application/problem+json");
    expect(opened.problem).toMatchObject({ status: 403, code: "test.refused", instance: "/t/watch/refused" });
  });

  it("answer malformed input as 400 request.invalid naming the parameter", async () => {
    const opened = await openEventStream(`${url}/overlay?bogus=1`);
    expect(opened.status).toBe(400);
    expect(opened.problem).toMatchObject({ code: "request.invalid", field: "bogus" });
  });

  it("send a problem after the first message as event: error, then close", async () => {
    const stream = (await openEventStream(`${url}/watch/fails`)).stream!;
    expect((await stream.next())?.data).toEqual({ status: "SERVING" });
    expect(await stream.next()).toEqual({
      event: "error",
      data: expect.objectContaining({ status: 409, code: "test.later", instance: "/t/watch/fails" }),
    });
    expect(await stream.next()).toBeUndefined();
  });

  it("never leak internals of a failure mid-stream (500 internal)", async () => {
    const stream = (await openEventStream(`${url}/watch/crashes`)).stream!;
    await stream.next();
    const error = await stream.next();
    expect(error?.event).toBe("error");
    expect(error?.data.status).toBe(500);
    expect(JSON.stringify(error?.data)).not.toContain("internals");
  });

  it("keep an idle stream alive with comment lines past the call deadline, and cancel the RPC when the client goes away", async () => {
    seen.aborted = false;
    const stream = (await openEventStream(`${url}/watch/quiet`)).stream!;
    await stream.next();
    // Two heartbeats (100 ms apart) are past the 50 ms call deadline.
    await until(() => stream.comments.filter((comment) => comment === "keep-alive").length >= 2);
    expect(seen.aborted).toBe(false);
    await stream.close();
    await until(() => seen.aborted === true);
  });

  it("cancel the RPC when the client goes away before the first message", async () => {
    seen.aborted = false;
    seen.waiting = false;
    const gone = new AbortController();
    const answer = fetch(`${url}/watch/slow`, { signal: gone.signal }).catch(() => undefined);
    await until(() => seen.waiting === true);
    gone.abort();
    await answer;
    await until(() => seen.aborted === true);
  });

  it("read the RPC only as fast as the client takes the events (a client that stops reading stops the RPC, memory stays bounded)", async () => {
    const response = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${url}/overlay?token=flood`, resolve).on("error", reject),
    );
    expect(response.statusCode).toBe(200);
    // The client reads nothing: only socket buffers and the body's own can fill.
    response.pause();
    // The gateway's own heartbeats on another stream mark time passing on its side (100 ms each).
    const clock = (await openEventStream(`${url}/watch/quiet`)).stream!;
    const beats = () => clock.comments.filter((comment) => comment === "keep-alive").length;
    await until(() => beats() >= 5);
    const produced = seen.flooded!;
    // Unbounded, the in-memory RPC would have made thousands of 256 KB events by now.
    expect(produced).toBeLessThan(300);
    const then = beats();
    await until(() => beats() >= then + 3);
    expect(seen.flooded! - produced).toBeLessThan(5);
    response.destroy();
    await clock.close();
  });

  it("answer a stream that ends before any message as an empty event stream, and one that ends after it with its end", async () => {
    const empty = await openEventStream(`${url}/watch/empty`);
    expect(empty.status).toBe(200);
    expect(await empty.stream!.next()).toBeUndefined();
    const stream = (await openEventStream(`${url}/watch/ends`)).stream!;
    expect(await stream.next()).toMatchObject({ data: { status: "SERVING" } });
    expect(await stream.next()).toBeUndefined();
  });
});

describe("the whole gateway", () => {
  it("answers an event stream with the CORS headers of its JSON routes", async () => {
    const opening = createRouterTransport((router) =>
      router.service(TipsOverlayService, {
        async *openOverlayStream() {
          yield create(OverlayEventSchema, { event: { case: "opened", value: {} } });
        },
      } as never),
    );
    const config = loadConfig({ PF_CORS_ORIGINS: "https://overlay.example" });
    const gateway = await buildGateway({
      services: [TipsOverlayService],
      transport: opening,
      admission: admitEveryone,
      config,
      logger: createLogger("silent"),
      readiness: async () => ({}),
    });
    const base = await gateway.listen({ port: 0, host: "127.0.0.1" });
    try {
      const opened = await openEventStream(`${base}/tips/api/v1/stream?token=x`, { origin: "https://overlay.example" });
      expect(opened.status).toBe(200);
      expect(opened.headers.get("access-control-allow-origin")).toBe("https://overlay.example");
      expect(opened.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
      expect(await opened.stream!.next()).toMatchObject({ event: "opened" });
      const other = await openEventStream(`${base}/tips/api/v1/stream?token=x`, {
        origin: "https://elsewhere.example",
      });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
      await other.stream?.close();
    } finally {
      await gateway.close();
    }
  });

  it("ends its open event streams at once instead of waiting out its grace period, and cancels their RPCs", async () => {
    const quiet = createRouterTransport((router) =>
      router.service(TipsOverlayService, {
        async *openOverlayStream(_request: unknown, context: HandlerContext) {
          yield create(OverlayEventSchema, { event: { case: "opened", value: {} } });
          await untilAborted(context);
        },
      } as never),
    );
    const gateway = await buildGateway({
      services: [TipsOverlayService],
      transport: quiet,
      admission: admitEveryone,
      config: loadConfig({}),
      logger: createLogger("silent"),
      readiness: async () => ({}),
    });
    const base = await gateway.listen({ port: 0, host: "127.0.0.1" });
    seen.aborted = false;
    const stream = (await openEventStream(`${base}/tips/api/v1/stream?token=x`)).stream!;
    expect(await stream.next()).toMatchObject({ event: "opened" });
    const started = Date.now();
    await gateway.close();
    await stream.end(2000);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(seen.aborted).toBe(true);
  });
});
