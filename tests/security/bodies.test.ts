import { connect as connectHttp2, constants } from "node:http2";
import { connect as connectTcp } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { JSON_SHAPE_LIMITS, jsonShapeFault } from "../../gateway/json-shape.js";
import { usePlatform } from "../support/platform.js";

// Bodies that must not be waited for arrive within 400 ms here.
const t = usePlatform({ services: ["tips"], env: { PF_BODY_TIMEOUT_MS: "400" } });
let creator: string;

beforeAll(async () => {
  creator = await t.token({ kind: "user", sub: "usr_bodies1" });
});

/**
 * Sends a request's head announcing `announced` bytes of body, then only the
 * first bytes of it, and answers the status line and headers the server sends
 * back while the rest is still owed: an answer here was given without the body.
 */
function partialHttp1(
  path: string,
  headers: Record<string, string>,
  announced: number,
): Promise<{ status: number; head: string }> {
  const { hostname, port } = new URL(t.gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(port), hostname, () => {
      const lines = [
        `POST ${path} HTTP/1.1`,
        `host: ${hostname}`,
        "content-type: application/json",
        `content-length: ${announced}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      ];
      socket.write(`${lines.join("\r\n")}\r\n\r\n{"k0": 0, "k1": 1`);
    });
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) return;
      socket.destroy();
      resolve({ status: Number(received.slice(9, 12)), head: received.slice(0, end).toLowerCase() });
    });
    socket.on("error", reject);
  });
}

/** The same over the RPC port (HTTP/2): the response headers of a call whose body is still owed. */
function partialRpc(path: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const session = connectHttp2(t.platform.rpcUrl);
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const stream = session.request({ ":method": "POST", ":path": path, "content-length": "1000000", ...headers });
    stream.write('{"k0": 0, "k1": 1');
    stream.on("response", (answer) => resolve(answer));
    stream.on("error", reject);
    stream.on("close", () => reject(new Error(`stream closed with code ${stream.rstCode}`)));
  }).finally(() => session.destroy());
}

describe("a body from a caller the route does not admit", () => {
  it("is answered 401 over HTTP before it has arrived, and its connection closed rather than read", async () => {
    const answer = await partialHttp1("/tips/api/v1/goals", {}, 1_000_000);
    expect(answer.status).toBe(401);
    expect(answer.head).toContain("connection: close");
  });

  it("is answered 404 on a path no route answers, before it has arrived", async () => {
    const answer = await partialHttp1("/tips/api/v1/nowhere", { authorization: `Bearer ${creator}` }, 1_000_000);
    expect(answer.status).toBe(404);
    expect(answer.head).toContain("connection: close");
  });

  it("is answered 401 over RPC (Connect and gRPC) before it has arrived", async () => {
    const connect = await partialRpc("/pf.tips.v1.TipsService/CreateGoal", { "content-type": "application/json" });
    expect(connect[":status"]).toBe(401);
    const grpc = await partialRpc("/pf.tips.v1.TipsService/CreateGoal", { "content-type": "application/grpc" });
    expect(grpc[":status"]).toBe(200);
    expect(grpc["grpc-status"]).toBe("16");
  });
});

describe("a body sent slower than the body timeout", () => {
  it("is answered 408 request.timeout over HTTP, its connection closed", async () => {
    const answer = await partialHttp1("/tips/api/v1/goals", { authorization: `Bearer ${creator}` }, 1_000);
    expect(answer.status).toBe(408);
    expect(answer.head).toContain("connection: close");
  });

  it("is cancelled over RPC", async () => {
    const session = connectHttp2(t.platform.rpcUrl);
    try {
      const code = await new Promise<number>((resolve) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/pf.tips.v1.TipsService/CreateGoal",
          "content-type": "application/json",
          "content-length": "1000",
          authorization: `Bearer ${creator}`,
        });
        stream.write('{"title": "');
        stream.on("error", () => undefined);
        stream.on("close", () => resolve(stream.rstCode));
      });
      expect(code).toBe(constants.NGHTTP2_CANCEL);
    } finally {
      session.destroy();
    }
  });
});

describe("a body too wide or too deep", () => {
  const wide = Object.fromEntries(Array.from({ length: JSON_SHAPE_LIMITS.members + 1 }, (_, i) => [`k${i}`, i]));
  const long = { title: "x", items: Array.from({ length: JSON_SHAPE_LIMITS.items + 1 }, () => 0) };
  const deep = JSON.stringify(Array.from({ length: JSON_SHAPE_LIMITS.depth + 1 }).reduce((inner) => ({ a: inner }), 0));

  it("is refused 400 naming the body before it is parsed, even from a caller the route admits", async () => {
    for (const [body, detail] of [
      [wide, /more than 1000 members/],
      [long, /more than 10000 items/],
      [deep, /deeper than 64 levels/],
    ] as const) {
      const answer = await t.http("POST", "/tips/api/v1/goals", { token: creator, body });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: "request.invalid", field: "body" });
      expect(answer.body.detail).toMatch(detail);
    }
  });

  it("counts members and items, not the commas and colons inside strings", () => {
    const quoted = JSON.stringify({ text: ",:".repeat(50_000), list: [`"[{`, "a,b"] });
    expect(jsonShapeFault(quoted)).toBeUndefined();
    expect(jsonShapeFault(JSON.stringify(wide))).toMatch(/members/);
    expect(jsonShapeFault(JSON.stringify(Array.from({ length: 10_000 }, () => 1)))).toBeUndefined();
    expect(jsonShapeFault(JSON.stringify(Array.from({ length: 10_001 }, () => 1)))).toMatch(/items/);
  });
});
