import { createRegistry } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { BODY_HOOKS } from "../../gateway/bodies.js";
import type { Binding } from "../../gateway/bindings.js";
import { registerBindings } from "../../gateway/routes.js";
import { parseTemplate } from "../../gateway/template.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { admitEveryone } from "./support.js";

/** Bindings of the (unannotated) health service, made by hand: Watch is server-streaming, Check unary. */
const binding = (rpc: "check" | "watch", path: string): Binding => ({
  key: "health",
  service: Health,
  method: Health.method[rpc],
  verb: "GET",
  template: parseTemplate(path),
  body: "",
});

describe("hooks for bindings the JSON path does not serve", () => {
  it("claims streaming RPCs (served as event streams, sse.test.ts) and leaves unary ones to the JSON handler", () => {
    expect(BODY_HOOKS.filter((hook) => hook.claims(binding("watch", "/watch"))).map((hook) => hook.name)).toEqual([
      "server-streaming-events",
    ]);
    expect(BODY_HOOKS.some((hook) => hook.claims(binding("check", "/check")))).toBe(false);
  });
});

describe("405 answers", () => {
  it("never hide a variable route behind another method's fixed path", async () => {
    const app = Fastify();
    const context = {
      transport: createRouterTransport(() => {}),
      admission: admitEveryone,
      timeoutMs: 1000,
      registry: createRegistry(),
      logger: createLogger("silent"),
    };
    const bindings = [{ ...binding("check", "/m/{service}/x") }, { ...binding("check", "/m/bulk/x"), verb: "POST" }];
    const routes = registerBindings(app, bindings, {}, context);
    // GET /health/m/bulk/x is the variable route's (service=bulk), not a 405 for the fixed POST path.
    expect((await app.inject({ url: "/health/m/bulk/x" })).statusCode).not.toBe(405);
    expect(routes.allowed("", "/health/m/bulk/x").sort()).toEqual(["GET", "HEAD", "POST"]);
    expect(routes.allowed("", "/health/m/abc/x").sort()).toEqual(["GET", "HEAD"]);
    expect(routes.allowed("", "/health/other")).toEqual([]);
    await app.close();
  });
});
