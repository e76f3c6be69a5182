import { create } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGateway, type Gateway } from "../../gateway/gateway.js";
import { BlocksResultSchema, NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { problem } from "../../services/kit/handler/problem.js";
import { clientIpOf } from "../../services/kit/handler/client-address.js";
import { admitEveryone } from "./support.js";

const ORIGIN = "https://app.example";

/** The address the last RPC was told, as a service reads it. */
let clientIp: string | undefined;

/** The network service as far as the gateway sees it: blocks echo, a debit that is rate-limited. */
const transport = createRouterTransport((router) =>
  router.service(NetworkService, {
    getBlocks(request, ctx) {
      clientIp = clientIpOf(ctx.requestHeader);
      return create(BlocksResultSchema, { subject: request.subject });
    },
    debitCoins() {
      throw problem(429, "rate.limited", "Too many requests (network.debit); try again in 42 seconds.", {
        rule: "network.debit",
        retry_after_seconds: 42,
      });
    },
  }),
);

let gateway: Gateway;
let port: number;

beforeAll(async () => {
  gateway = await buildGateway({
    services: [NetworkService],
    transport,
    admission: admitEveryone,
    config: { ...loadConfig({}), corsOrigins: [ORIGIN] },
    logger: createLogger("silent"),
    readiness: async () => ({}),
  });
  // Dual stack: IPv4 clients arrive as ::ffff:a.b.c.d.
  const base = await gateway.listen({ port: 0, host: "::" });
  port = Number(new URL(base).port);
});
afterAll(() => gateway?.close());

describe("the client's address", () => {
  it("is told to the RPC from the connection, never from what the client sends", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/network/internal/blocks?subject=usr_1`, {
      headers: { "pf-client-ip": "203.0.113.66", "x-pf-client-ip": "203.0.113.67", "x-forwarded-for": "203.0.113.68" },
    });
    expect(response.status).toBe(200);
    expect(clientIp).toBe("127.0.0.1");
  });

  it("is the IPv6 address of an IPv6 client", async () => {
    await fetch(`http://[::1]:${port}/network/internal/blocks?subject=usr_1`);
    expect(clientIp).toBe("::1");
  });

  it("is empty for a caller that did not come through the gateway", () => {
    expect(clientIpOf(new Headers())).toBe("");
  });
});

describe("429 rate.limited", () => {
  it("carries Retry-After in whole seconds, exposed to browsers", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/network/internal/coins/debit`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ subject: "usr_1", amount: 1 }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("42");
    expect(response.headers.get("access-control-expose-headers")).toMatch(/Retry-After/);
    expect(await response.json()).toMatchObject({
      code: "rate.limited",
      rule: "network.debit",
      retry_after_seconds: 42,
    });
  });
});
