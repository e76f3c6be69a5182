import { create } from "@bufbuild/protobuf";
import { createRouterTransport, type HandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway, type Gateway } from "../../gateway/gateway.js";
import {
  BlocksResultSchema,
  CoinsBalanceResultSchema,
  ModuleRecordSchema,
  NetworkService,
  NotificationPushResultSchema,
  ResolveResultSchema,
} from "../../gen/pf/network/v1/network_pb.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { problem } from "../../services/kit/handler/problem.js";
import { answerStatus, STATUS_HEADER } from "../../services/kit/handler/status.js";
import { admitEveryone } from "./support.js";

const ORIGIN = "https://app.example";
const BODY_LIMIT = 4096;

/** The headers the last RPC received. */
let seen: Headers = new Headers();
const record = (ctx: HandlerContext) => {
  seen = ctx.requestHeader;
};

/** An echo of the network service: this tests the gateway's mapping, not the service. */
const transport = createRouterTransport((router) =>
  router.service(NetworkService, {
    creditCoins(request, ctx) {
      record(ctx);
      ctx.responseHeader.set("etag", '"rev-1"');
      ctx.responseHeader.set("location", "/network/internal/coins/entries/ent_1");
      return create(CoinsBalanceResultSchema, {
        subject: request.subject,
        appId: request.appId,
        balance: request.amount,
        entryId: request.idempotencyKey,
      });
    },
    debitCoins() {
      throw problem(409, "insufficient_funds", "The balance is short by 3 coins.", {
        balance: 2,
        needed: 5,
        status: 200,
      });
    },
    transferCoins(_request, ctx) {
      ctx.responseHeader.set(STATUS_HEADER, "204");
      return {};
    },
    getBlocks(request, ctx) {
      record(ctx);
      ctx.responseHeader.set("cache-control", "private, max-age=60");
      return create(BlocksResultSchema, { subject: request.subject, blocked: ["usr_2"] });
    },
    resolveIdentity(request) {
      return create(ResolveResultSchema, {
        results: [
          { query: { subject: request.subject, service: request.service, localId: request.localId }, found: false },
        ],
      });
    },
    getModule(request, ctx) {
      if (ctx.requestHeader.get("if-none-match") === '"r1"') {
        ctx.responseHeader.set(STATUS_HEADER, "304");
        ctx.responseHeader.set("etag", '"r1"');
      }
      return create(ModuleRecordSchema, { namespace: request.namespace, subject: request.subject, revision: 1n });
    },
    putModule(request, ctx) {
      // Declares 200 (first) and 201: a first revision is created.
      if (request.expectedRevision === 0n) answerStatus(ctx, 201);
      return create(ModuleRecordSchema, {
        namespace: request.namespace,
        subject: request.subject,
        record: request.record,
        revision: request.expectedRevision + 1n,
      });
    },
    pushNotification(request) {
      return create(NotificationPushResultSchema, {
        notifications: request.recipients.map((recipient) => ({
          id: "ntf_1",
          recipient,
          kind: request.kind,
          title: request.title,
          payload: request.payload,
        })),
      });
    },
    getGithubToken() {
      throw new Error("database password is hunter2");
    },
  }),
);

let gateway: Gateway;
let base: string;
let ready = true;

beforeAll(async () => {
  const config = {
    ...loadConfig({}),
    corsOrigins: [ORIGIN],
    bodyLimit: BODY_LIMIT,
    hostRouting: { "net.example": "network" },
    callTimeoutMs: 2000,
  };
  gateway = await buildGateway({
    services: [NetworkService],
    transport,
    admission: admitEveryone,
    config,
    logger: createLogger("silent"),
    readiness: async () => ({ database: true, nats: ready }),
  });
  base = await gateway.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(() => gateway?.close());

const call = (path: string, init: RequestInit = {}) => fetch(base + path, init);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

async function expectProblem(response: Response, status: number, code: string, field?: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(body.instance).toBe(new URL(response.url).pathname);
  if (field !== undefined) expect(body.field).toBe(field);
  return body;
}

describe("request mapping", () => {
  it("maps a body `*` route, camel or proto names, and answers in proto names with int64 as strings", async () => {
    const response = await post("/network/internal/coins/credit", {
      subject: "usr_1",
      amount: 5,
      idempotencyKey: "k1",
      app_id: "app_1",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ subject: "usr_1", app_id: "app_1", balance: "5", entry_id: "k1" });
  });

  it("maps path variables, percent-decoded, and a {kind=**} rest variable with slashes", async () => {
    const module = await call("/network/internal/modules/pf.games/usr%201");
    expect(await module.json()).toMatchObject({ namespace: "pf.games", subject: "usr 1", revision: "1" });

    const push = await post("/network/internal/notifications/tips/received", {
      recipients: ["usr_1"],
      title: "hi",
      payload: { n: 1 },
    });
    expect(push.status).toBe(201);
    expect(await push.json()).toMatchObject({
      notifications: [{ recipient: "usr_1", kind: "tips/received", title: "hi", payload: { n: 1 } }],
    });
  });

  it("refuses a body naming a path variable's field with another value, and takes the same value", async () => {
    const put = (body: object) =>
      call("/network/internal/modules/games/usr_1", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const other = await put({ namespace: "other", record: { level: 3 }, expectedRevision: "4" });
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ code: "request.invalid", field: "namespace" });
    const same = await put({ namespace: "games", record: { level: 3 }, expectedRevision: "4" });
    expect(await same.json()).toMatchObject({
      namespace: "games",
      subject: "usr_1",
      record: { level: 3 },
      revision: "5",
    });
  });

  it("maps query parameters in proto or lowerCamel spelling", async () => {
    const response = await call("/network/internal/identity/resolve?service=space&localId=42");
    expect(await response.json()).toEqual({
      results: [{ query: { subject: "", service: "space", local_id: "42" }, found: false }],
    });
  });
});

describe("headers", () => {
  it("forwards the meaningful headers and only those, and echoes the request id", async () => {
    const forwarded = {
      authorization: "Bearer t0k",
      "x-pf-subject": "usr_9",
      "x-pf-anything": "yes",
      "idempotency-key": "k2",
      "if-match": '"r1"',
      "last-event-id": "7",
      "x-request-id": "req-123",
    };
    const response = await call("/network/internal/blocks?subject=usr_1", {
      headers: { ...forwarded, cookie: "session=1", "user-agent": "test" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("req-123");
    expect(response.headers.get("cache-control")).toBe("private, max-age=60");
    for (const [name, value] of Object.entries(forwarded)) {
      expect(seen.get(name), name).toBe(value);
    }
    expect(seen.get("cookie")).toBeNull();
  });

  it("generates a request id when there is none, the same one for the RPC and the response", async () => {
    const response = await call("/network/internal/blocks?subject=usr_1");
    const id = response.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.get("x-request-id")).toBe(id);
  });

  it("takes a client's request id only when it is short and token-like, else makes a new one", async () => {
    for (const sent of ["a".repeat(128), "trace:01.ab_C-9"]) {
      const response = await gateway.app.inject({ url: "/healthz", headers: { "x-request-id": sent } });
      expect(response.headers["x-request-id"]).toBe(sent);
    }
    for (const sent of ["a".repeat(8192), "a".repeat(129), "caf\u00e9", "two words", "a\u0000b", ""]) {
      const response = await gateway.app.inject({
        url: "/network/internal/blocks?subject=usr_1",
        headers: { "x-request-id": sent },
      });
      const id = response.headers["x-request-id"];
      expect(id, JSON.stringify(sent.slice(0, 20))).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.get("x-request-id")).toBe(id);
    }
  });

  it("maps etag and location back", async () => {
    const response = await post("/network/internal/coins/credit", { subject: "usr_1", amount: 1 });
    expect(response.headers.get("etag")).toBe('"rev-1"');
    expect(response.headers.get("location")).toBe("/network/internal/coins/entries/ent_1");
  });

  it("answers the first success status the RPC declares, or another its handler answered", async () => {
    // PushNotification declares 201; its handler sets nothing.
    const pushed = await post("/network/internal/notifications/tips/received", { recipients: ["usr_1"], title: "hi" });
    expect(pushed.status).toBe(201);
    expect(pushed.headers.get("pf-http-status")).toBeNull();
    // PutModule declares 200 then 201: 200 by default, 201 when its handler answers it.
    const put = (expectedRevision: string) =>
      call("/network/internal/modules/games/usr_1", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ expectedRevision }),
      });
    expect((await put("3")).status).toBe(200);
    const created = await put("0");
    expect(created.status).toBe(201);
    expect(created.headers.get("pf-http-status")).toBeNull();
    // CreditCoins declares none: 200.
    expect((await post("/network/internal/coins/credit", { subject: "usr_1", amount: 1 })).status).toBe(200);
  });

  it("sends 304 and 204 without a body", async () => {
    const notModified = await call("/network/internal/modules/games/usr_1", { headers: { "if-none-match": '"r1"' } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe('"r1"');
    expect(await notModified.text()).toBe("");
    const noContent = await post("/network/internal/coins/transfer", {
      from_subject: "usr_1",
      to_subject: "usr_2",
      amount: 1,
    });
    expect(noContent.status).toBe(204);
    expect(await noContent.text()).toBe("");
  });
});

describe("problems", () => {
  it("renders a service's problem with its status, code and flattened extensions", async () => {
    const body = await expectProblem(
      await post("/network/internal/coins/debit", { subject: "usr_1", amount: 5 }),
      409,
      "insufficient_funds",
    );
    expect(body).toMatchObject({ detail: "The balance is short by 3 coins.", balance: 2, needed: 5, status: 409 });
  });

  it("answers a handler's crash as a 500 without its internals", async () => {
    const response = await call("/network/internal/integrations/github-token");
    const body = await expectProblem(response, 500, "internal");
    expect(JSON.stringify(body)).not.toContain("hunter2");
  });

  it("answers unknown paths 404 route.not_found and known paths with another method 405 with Allow", async () => {
    await expectProblem(await call("/network/internal/nope"), 404, "route.not_found");
    await expectProblem(await call("/nowhere/internal/blocks"), 404, "route.not_found");
    await expectProblem(await call("/internal/blocks"), 404, "route.not_found");
    const wrong = await call("/network/internal/modules/games/usr_1", { method: "DELETE" });
    await expectProblem(wrong, 405, "route.method_not_allowed");
    expect(wrong.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "HEAD", "PUT"]);
    const onPost = await call("/network/internal/coins/credit");
    await expectProblem(onPost, 405, "route.method_not_allowed");
    expect(onPost.headers.get("allow")).toBe("POST");
  });

  it.each([
    ["bad JSON", () => post("/network/internal/coins/credit", "{not json"), "body"],
    ["a wrong type", () => post("/network/internal/coins/credit", { amount: "lots" }), "amount"],
    ["a string field given a number", () => post("/network/internal/coins/credit", { subject: 5 }), "subject"],
    ["an unknown body field", () => post("/network/internal/coins/credit", { amount: 1, price: 3 }), "price"],
    [
      "a nested unknown field",
      () => post("/network/internal/identity/resolve-batch", { queries: [{ subject: "usr_1" }, { nick: "x" }] }),
      "queries[1].nick",
    ],
    ["a body that is not an object", () => post("/network/internal/coins/credit", [1, 2]), "body"],
    ["an unknown query parameter", () => call("/network/internal/blocks?subject=usr_1&sort=asc"), "sort"],
    ["a query parameter on a body `*` route", () => post("/network/internal/coins/credit?amount=1", {}), "amount"],
    ["a repeated single-valued parameter", () => call("/network/internal/blocks?subject=a&subject=b"), "subject"],
    ["malformed percent-encoding in the path", () => call("/network/internal/modules/%zz/x"), "path"],
  ])("refuses %s with 400 request.invalid naming the field", async (_name, send, field) => {
    await expectProblem(await send(), 400, "request.invalid", field);
  });

  it("refuses a JSON body sent to a GET route", async () => {
    const response = await gateway.app.inject({
      method: "GET",
      url: "/network/internal/blocks?subject=a",
      headers: { "content-type": "application/json" },
      payload: "{}",
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: "request.invalid", field: "body" });
  });

  it("answers 413 request.too_large over the body limit and 415 for bodies that are not JSON", async () => {
    await expectProblem(
      await post("/network/internal/coins/credit", { reason: "x".repeat(BODY_LIMIT) }),
      413,
      "request.too_large",
    );
    const text = await call("/network/internal/coins/credit", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "amount=5",
    });
    await expectProblem(text, 415, "request.unsupported_media_type");
    const form = await call("/network/internal/coins/credit", {
      method: "POST",
      body: new URLSearchParams({ amount: "5" }),
    });
    await expectProblem(form, 415, "request.unsupported_media_type");
  });

  it("takes an empty JSON body as an empty message", async () => {
    const response = await call("/network/internal/coins/credit", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(200);
  });
});

describe("around the routes", () => {
  it("answers a request Node cannot parse as HTTP with a problem too", async () => {
    const { connect } = await import("node:net");
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(base).port), "127.0.0.1", () =>
        socket.write("GET /network/x HTTP/1.1\r\nHost: a\r\nBad Header Line\r\n\r\n"),
      );
      let text = "";
      socket.on("data", (chunk) => (text += chunk));
      socket.on("close", () => resolve(text));
    });
    expect(raw).toMatch(/^HTTP\/1.1 400/);
    expect(raw).toContain("application/problem+json");
    expect(raw).toContain('"code":"request.invalid"');
  });

  it("answers CORS preflights for the configured origins only, and exposes ETag, Location, Retry-After and X-Request-Id", async () => {
    const preflight = await call("/network/internal/coins/credit", {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, x-pf-subject",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    const allowed = preflight.headers.get("access-control-allow-headers")?.toLowerCase().split(", ");
    expect(allowed).toEqual(
      expect.arrayContaining([
        "authorization",
        "content-type",
        "idempotency-key",
        "if-match",
        "if-none-match",
        "x-pf-subject",
      ]),
    );

    const stranger = await call("/network/internal/coins/credit", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(stranger.headers.get("access-control-allow-origin")).toBeNull();

    const actual = await post("/network/internal/coins/credit", { amount: 1 }, { origin: ORIGIN });
    expect(actual.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(actual.headers.get("access-control-expose-headers")).toBe("ETag, Location, Retry-After, X-Request-Id");
  });

  it("serves a routed host's service at the root of that host", async () => {
    const routed = await gateway.app.inject({
      url: "/internal/blocks?subject=usr_1",
      headers: { host: "net.example:8080" },
    });
    expect(routed.statusCode).toBe(200);
    expect(routed.json()).toMatchObject({ subject: "usr_1" });
    const other = await gateway.app.inject({
      url: "/internal/blocks?subject=usr_1",
      headers: { host: "other.example" },
    });
    expect(other.statusCode).toBe(404);
    const openapi = await gateway.app.inject({ url: "/openapi.json", headers: { host: "net.example" } });
    expect(openapi.json()).toMatchObject({ info: { title: "pf network" } });
  });

  it("answers /healthz, /readyz and the OpenAPI documents", async () => {
    expect(await (await call("/healthz")).json()).toEqual({ status: "ok" });
    expect(await (await call("/readyz")).json()).toEqual({ status: "ok", checks: { database: true, nats: true } });
    ready = false;
    const unready = await call("/readyz");
    ready = true;
    expect(unready.status).toBe(503);
    expect(await unready.json()).toEqual({ status: "unavailable", checks: { database: true, nats: false } });

    const whole = (await (await call("/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(whole.paths).toHaveProperty(["/network/internal/coins/credit"]);
    const own = (await (await call("/network/openapi.json")).json()) as {
      servers: unknown;
      paths: Record<string, unknown>;
    };
    expect(own.servers).toEqual([{ url: "/network" }]);
    expect(own.paths).toHaveProperty(["/internal/coins/credit"]);
  });
});
