import { createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Binding } from "../../gateway/bindings.js";
import { buildGateway, type Gateway } from "../../gateway/gateway.js";
import { RouteTable } from "../../gateway/route-table.js";
import { parseTemplate } from "../../gateway/template.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { type Access, Cors } from "../../gen/pf/v1/options_pb.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { testEnforcement, withAccess } from "./support.js";

const PLATFORM = "https://app.example";
const ANY = "https://anywhere.example";

/**
 * The network service as its descriptors declare it, with GetBlocks and
 * GetModule opened to every origin (`cors: CORS_OPEN`, which no proto uses
 * yet); PutModule shares GetModule's path and keeps the platform's origins.
 * Enforcement is real and no request carries a token: every answer is a 401,
 * which is what a browser must be able to read.
 */
const openToAll = (rule: Access) => (rule.cors = Cors.OPEN);
const network = withAccess(withAccess(NetworkService, "GetBlocks", openToAll), "GetModule", openToAll);

async function gatewayWith(origins: string, services = [network]): Promise<{ gateway: Gateway; base: string }> {
  const gateway = await buildGateway({
    services,
    transport: createRouterTransport(() => {}),
    admission: (await testEnforcement()).admission,
    config: loadConfig({ PF_CORS_ORIGINS: origins }),
    logger: createLogger("silent"),
    readiness: async () => ({}),
  });
  return { gateway, base: await gateway.listen({ port: 0, host: "127.0.0.1" }) };
}

const preflight = (base: string, path: string, origin: string, method: string) =>
  fetch(base + path, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization, content-type",
    },
  });
const allowedOrigin = (answer: Response) => answer.headers.get("access-control-allow-origin");

describe.each([
  ["with the platform's origins configured", PLATFORM],
  ["with no origin configured", ""],
])("per-route CORS %s", (_name, origins) => {
  let gateway: Gateway;
  let base: string;
  beforeAll(async () => ({ gateway, base } = await gatewayWith(origins)));
  afterAll(() => gateway?.close());

  it("answers any origin with * on an open route, never with credentials", async () => {
    const answer = await fetch(`${base}/network/internal/blocks?subject=usr_1`, { headers: { origin: ANY } });
    expect(answer.status).toBe(401);
    expect(allowedOrigin(answer)).toBe("*");
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
    expect(answer.headers.get("access-control-expose-headers")).toBe("ETag, Location, Retry-After, X-Request-Id");
  });

  it("answers an open route's preflight from any origin with *", async () => {
    const answer = await preflight(base, "/network/internal/blocks", ANY, "GET");
    expect(answer.status).toBe(204);
    expect(allowedOrigin(answer)).toBe("*");
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
    expect(answer.headers.get("access-control-allow-methods")).toContain("GET");
    const headers = answer.headers.get("access-control-allow-headers")?.toLowerCase().split(", ");
    expect(headers).toEqual(expect.arrayContaining(["authorization", "content-type"]));
  });

  it("decides a preflight by the method it asks for: GET of a path is open, PUT of the same path is not", async () => {
    const module = "/network/internal/modules/games/usr_1";
    expect(allowedOrigin(await preflight(base, module, ANY, "GET"))).toBe("*");
    expect(allowedOrigin(await preflight(base, module, ANY, "HEAD"))).toBe("*");
    expect(allowedOrigin(await preflight(base, module, ANY, "PUT"))).toBeNull();
    expect(allowedOrigin(await fetch(base + module, { method: "PUT", headers: { origin: ANY } }))).toBeNull();
  });

  it("keeps every other route to the platform's origins", async () => {
    const stranger = await fetch(`${base}/network/internal/coins/credit`, { method: "POST", headers: { origin: ANY } });
    expect(stranger.status).toBe(401);
    expect(allowedOrigin(stranger)).toBeNull();
    expect(allowedOrigin(await preflight(base, "/network/internal/coins/credit", ANY, "POST"))).toBeNull();
    const own = await fetch(`${base}/network/internal/coins/credit`, { method: "POST", headers: { origin: PLATFORM } });
    expect(allowedOrigin(own)).toBe(origins === "" ? null : PLATFORM);
    const ownPreflight = await preflight(base, "/network/internal/coins/credit", PLATFORM, "POST");
    expect(allowedOrigin(ownPreflight)).toBe(origins === "" ? null : PLATFORM);
    // No origin configured: a preflight of a route that is not open is not answered as one (as without CORS).
    expect(ownPreflight.status).toBe(origins === "" ? 405 : 204);
  });
});

/** The public documents: the platform's and one service's. */
const DOCUMENTS = ["/openapi.json", "/network/openapi.json", "/asyncapi.json", "/network/asyncapi.json"];

describe.each([
  ["with the platform's origins configured", PLATFORM],
  ["with no origin configured and no route open", ""],
])("the OpenAPI and AsyncAPI documents %s", (_name, origins) => {
  let gateway: Gateway;
  let base: string;
  beforeAll(async () => ({ gateway, base } = await gatewayWith(origins, [NetworkService])));
  afterAll(() => gateway?.close());

  it("answer any origin with *, never with credentials: API tools in a browser fetch them", async () => {
    for (const path of DOCUMENTS) {
      const answer = await fetch(base + path, { headers: { origin: ANY } });
      expect(answer.status, path).toBe(200);
      expect(allowedOrigin(answer), path).toBe("*");
      expect(answer.headers.get("access-control-allow-credentials"), path).toBeNull();
    }
  });

  it("answer the preflight of a GET from any origin (a service token's Authorization reads the whole document)", async () => {
    for (const path of DOCUMENTS) {
      const answer = await preflight(base, path, ANY, "GET");
      expect(answer.status, path).toBe(204);
      expect(allowedOrigin(answer), path).toBe("*");
    }
    // The API routes beside them keep the platform's origins.
    expect(allowedOrigin(await preflight(base, "/network/internal/blocks", ANY, "GET"))).toBeNull();
    expect(allowedOrigin(await fetch(`${base}/network/internal/blocks`, { headers: { origin: ANY } }))).toBeNull();
  });
});

describe("the route a preflight asks about", () => {
  const binding = (verb: string, path: string) => ({ key: "t", verb, template: parseTemplate(path) }) as Binding;
  const table = new RouteTable();
  const bulk = binding("POST", "/items/bulk");
  const item = binding("POST", "/items/{id}");
  const rest = binding("POST", "/items/{path=**}");
  const read = binding("GET", "/items/{id}");
  for (const [each, url] of [
    [rest, "/t/items/*"],
    [item, "/t/items/:p0"],
    [bulk, "/t/items/bulk"],
    [read, "/t/items/:p0"],
  ] as const) {
    table.add(each, url);
  }

  it("is the one the router serves: a literal segment before a variable before the rest of the path", () => {
    expect(table.bindingAt("", "/t/items/bulk", "POST")).toBe(bulk);
    expect(table.bindingAt("", "/t/items/it_1", "POST")).toBe(item);
    expect(table.bindingAt("", "/t/items/a/b", "POST")).toBe(rest);
    expect(table.bindingAt("", "/t/items/bulk", "GET")).toBe(read);
    expect(table.bindingAt("", "/t/items/bulk", "head")).toBe(read);
    expect(table.bindingAt("", "/t/items/a/b", "GET")).toBeUndefined();
  });
});
