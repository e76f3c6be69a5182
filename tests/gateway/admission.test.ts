import { create, setExtension } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway, type Gateway } from "../../gateway/gateway.js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { OverlayEventSchema, TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { testEnforcement, withAccess, withOptions } from "./support.js";

/**
 * Authentication comes first: the gateway admits each request as its RPC
 * will, before it reads a body, a path variable or a query parameter. The
 * services are tips' overlay routes and billing's webhook as their descriptors
 * declare them, with three edits no proto has: ListOverlayTokens also bound
 * at a path whose variable is an int32 (`limit`), and the overlay stream
 * (server-streaming) and the webhook (raw body) not open to anonymous callers.
 */
const pageByPath = create(HttpRuleSchema, { pattern: { case: "get", value: "/api/v1/overlay-tokens/page/{limit}" } });
const overlays = withAccess(
  withOptions(TipsOverlayService, "ListOverlayTokens", (options) => setExtension(options, http, pageByPath)),
  "OpenOverlayStream",
  (rule) => (rule.anonymous = false),
);
const billing = withAccess(BillingService, "ReceiveProviderWebhook", (rule) => (rule.anonymous = false));

/** RPCs that reached a handler: none may, for a caller refused. */
let reached: string[] = [];
const transport = createRouterTransport((router) => {
  const reach = (name: string) => () => {
    reached.push(name);
    return {};
  };
  router.service(overlays, {
    listOverlayTokens: reach("listOverlayTokens"),
    revokeOverlayToken: reach("revokeOverlayToken"),
    createOverlayConfig: reach("createOverlayConfig"),
    listOverlayConfigs: reach("listOverlayConfigs"),
    async *openOverlayStream() {
      reached.push("openOverlayStream");
      yield create(OverlayEventSchema, { event: { case: "opened", value: {} } });
    },
  } as never);
  router.service(billing, { receiveProviderWebhook: reach("receiveProviderWebhook") } as never);
});

const BODY_LIMIT = 1024;
let gateway: Gateway;
let base: string;
let person: string;
let forged: string;
let thirdPartyApp: string;

beforeAll(async () => {
  const enforcement = await testEnforcement();
  const stranger = await testEnforcement();
  person = await enforcement.token({ kind: "user", sub: "usr_1" });
  thirdPartyApp = await enforcement.token({ kind: "app", app_id: "app_1", caps: ["tips.overlay.config.update"] });
  // Signed by another key: a token the platform never issued.
  forged = await stranger.token({ kind: "user", sub: "usr_1" });
  gateway = await buildGateway({
    services: [overlays, billing],
    transport,
    admission: enforcement.admission,
    config: { ...loadConfig({}), bodyLimit: BODY_LIMIT },
    logger: createLogger("silent"),
    readiness: async () => ({}),
  });
  base = await gateway.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(() => gateway?.close());

type Send = (authorization?: string) => Promise<Response>;
const send =
  (method: string, path: string, body?: string | Uint8Array, contentType = "application/json"): Send =>
  (authorization) =>
    fetch(base + path, {
      method,
      headers: { ...(authorization && { authorization }), ...(body !== undefined && { "content-type": contentType }) },
      body,
    });

/** Shape checks a caller without a right never reaches, and the field each 400 names once the caller is admitted. */
const malformed: [string, Send, string][] = [
  ["a body sent to a route that takes none", send("POST", "/tips/api/v1/overlay-tokens/ovt_1/revoke", "{}"), "body"],
  ["a body that is not JSON", send("POST", "/tips/api/v1/overlay-configs", "{not json"), "body"],
  ["an unknown body field", send("POST", "/tips/api/v1/overlay-configs", '{"colour":"red"}'), "colour"],
  ["an unknown query parameter", send("GET", "/tips/api/v1/overlay-configs?bogus=1"), "bogus"],
  ["a path variable that is not a number", send("GET", "/tips/api/v1/overlay-tokens/page/many"), "limit"],
  ["a query parameter that is not a number", send("GET", "/tips/api/v1/overlay-tokens/page/5?limit=x"), "limit"],
  ["an unknown query parameter on an event stream", send("GET", "/tips/api/v1/stream?bogus=1"), "bogus"],
];

/** Checks answered before any field is read: their status and code once the caller is admitted. */
const unreadable: [string, Send, number, string][] = [
  [
    "a body in a media type no route takes",
    send("POST", "/tips/api/v1/overlay-configs", "name=x", "text/plain"),
    415,
    "request.unsupported_media_type",
  ],
  [
    "a body over the limit",
    send("POST", "/tips/api/v1/overlay-configs", JSON.stringify({ name: "x".repeat(BODY_LIMIT) })),
    413,
    "request.too_large",
  ],
];

const rawBody = send("POST", "/billing/api/v1/webhooks/test", new Uint8Array([0, 255]), "application/octet-stream");

async function expectRefused(response: Response, status: number, code: string, challenge?: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(response.headers.get("www-authenticate")).toBe(challenge ?? null);
  expect(await response.json()).toMatchObject({ status, code, instance: new URL(response.url).pathname });
}

describe("authentication comes first", () => {
  it.each([...malformed, ...unreadable, ["a raw body", rawBody]] as [string, Send][])(
    "a caller without a token sending %s gets 401 auth.required, and no RPC is called",
    async (_what, request) => {
      reached = [];
      await expectRefused(await request(), 401, "auth.required", "Bearer");
      expect(reached).toEqual([]);
    },
  );

  it.each([...malformed, ...unreadable, ["a raw body", rawBody]] as [string, Send][])(
    "a caller with a forged token sending %s gets 401 auth.invalid",
    async (_what, request) => {
      reached = [];
      await expectRefused(await request(`Bearer ${forged}`), 401, "auth.invalid", 'Bearer error="invalid_token"');
      await expectRefused(await request("Basic dXNyOnB3"), 401, "auth.invalid", 'Bearer error="invalid_token"');
      expect(reached).toEqual([]);
    },
  );

  it("a caller the route refuses gets the RPC's own refusal before its body is read", async () => {
    const malformedBody = send("POST", "/tips/api/v1/overlay-configs", "{not json");
    await expectRefused(await malformedBody(`Bearer ${thirdPartyApp}`), 403, "auth.first_party_only");
  });

  it.each(malformed)("an admitted caller sending %s gets 400 naming the field", async (_what, request, field) => {
    const response = await request(`Bearer ${person}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "request.invalid", field });
  });

  it.each(unreadable)("an admitted caller sending %s gets its 4xx", async (_what, request, status, code) => {
    await expectRefused(await request(`Bearer ${person}`), status, code);
  });

  it("admits HEAD requests of GET routes too", async () => {
    const head = await fetch(`${base}/tips/api/v1/overlay-configs?bogus=1`, { method: "HEAD" });
    expect(head.status).toBe(401);
    expect(head.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("an admitted caller reaches the RPC, on JSON, event-stream and raw-body routes", async () => {
    reached = [];
    expect((await send("POST", "/tips/api/v1/overlay-tokens/ovt_1/revoke")(`Bearer ${person}`)).status).toBe(200);
    expect((await send("GET", "/tips/api/v1/overlay-tokens/page/5")(`Bearer ${person}`)).status).toBe(200);
    const stream = await send("GET", "/tips/api/v1/stream")(`Bearer ${person}`);
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    expect((await rawBody(`Bearer ${person}`)).status).toBe(200);
    expect(reached).toEqual(["revokeOverlayToken", "listOverlayTokens", "openOverlayStream", "receiveProviderWebhook"]);
  });

  it("a route open to anonymous callers still answers 400 for bad input", async () => {
    const anonymous = await buildGateway({
      services: [TipsOverlayService, BillingService],
      transport: createRouterTransport(() => {}),
      admission: (await testEnforcement()).admission,
      config: loadConfig({}),
      logger: createLogger("silent"),
      readiness: async () => ({}),
    });
    try {
      const stream = await anonymous.app.inject({ url: "/tips/api/v1/stream?bogus=1" });
      expect(stream.statusCode).toBe(400);
      expect(stream.json()).toMatchObject({ code: "request.invalid", field: "bogus" });
      const webhook = await anonymous.app.inject({ method: "POST", url: "/billing/api/v1/webhooks/t?x=1", body: "x" });
      expect(webhook.statusCode).toBe(400);
      expect(webhook.json()).toMatchObject({ code: "request.invalid", field: "x" });
    } finally {
      await anonymous.close();
    }
  });
});
