import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  createPlatformClient,
  createPlatformFetch,
  PlatformError,
  type PlatformClientOptions,
} from "../../clients/ts/src/index.js";
import { repeatable, retryAfterSeconds, retryWaitMs } from "../../clients/ts/src/retry-policy.js";
import { PasteRawResultSchema, PasteService } from "../../gen/pf/community/v1/pastes_pb.js";
import { BlocksResultSchema, CoinsBalanceResultSchema, NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { problem } from "../../services/kit/handler/problem.js";

describe("the retry policy", () => {
  const policy = { attempts: 3, backoffMs: 100, maxWaitMs: 5_000 };
  const half = () => 0.5;

  it("repeats idempotent calls, and others only with an idempotency key", () => {
    expect(repeatable({ idempotent: true, idempotencyKey: false })).toBe(true);
    expect(repeatable({ idempotent: false, idempotencyKey: true })).toBe(true);
    expect(repeatable({ idempotent: false, idempotencyKey: false })).toBe(false);
  });

  it("waits out a 503 with or without Retry-After, a 429 only with one, and nothing else", () => {
    expect(retryWaitMs(policy, 1, 503, undefined, half)).toBe(50);
    expect(retryWaitMs(policy, 2, 503, undefined, half)).toBe(100);
    expect(retryWaitMs(policy, 1, 503, 2, half)).toBe(2050);
    expect(retryWaitMs(policy, 1, 429, 2, half)).toBe(2050);
    expect(retryWaitMs(policy, 1, 429, undefined, half)).toBeUndefined();
    for (const status of [400, 409, 413, 500, 504]) expect(retryWaitMs(policy, 1, status, 1, half)).toBeUndefined();
  });

  it("stops after its tries, and at a Retry-After longer than its longest wait", () => {
    expect(retryWaitMs(policy, 3, 503, undefined, half)).toBeUndefined();
    expect(retryWaitMs(policy, 1, 429, 5, half)).toBe(5050);
    expect(retryWaitMs(policy, 1, 429, 6, half)).toBeUndefined();
  });

  it("backs off at random below a ceiling that doubles up to the longest wait", () => {
    const most = () => 1;
    const long = { attempts: 10, backoffMs: 100, maxWaitMs: 1_000 };
    expect([1, 2, 3, 4, 5, 9].map((tried) => retryWaitMs(long, tried, 503, undefined, most))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    expect(retryWaitMs(long, 4, 503, undefined, () => 0)).toBe(0);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(retryAfterSeconds("7", 0)).toBe(7);
    expect(retryAfterSeconds(new Date(10_000).toUTCString(), 1_500)).toBe(9);
    expect(retryAfterSeconds(new Date(0).toUTCString(), 5_000)).toBe(0);
    for (const unread of [null, undefined, "", "soon", "-3"]) expect(retryAfterSeconds(unread, 0)).toBeUndefined();
  });
});

/**
 * A platform client over an in-memory transport of network's and community's RPCs, each failing with the next of
 * `failures` while any are left; `calls` counts what reached the server, `headers` what the last call carried.
 */
function overFailures(failures: ConnectError[], options: Partial<PlatformClientOptions> = {}) {
  const calls: string[] = [];
  let headers = new Headers();
  const arrive = (name: string, header: Headers) => {
    calls.push(name);
    headers = header;
    const failure = failures.shift();
    if (failure) throw failure;
  };
  const pf = createPlatformClient({
    baseUrl: "http://in-memory",
    retries: { backoffMs: 1 },
    ...options,
    transport: ({ interceptors }) =>
      createRouterTransport(
        (router) => {
          router.service(NetworkService, {
            getBlocks(request, ctx) {
              arrive("getBlocks", ctx.requestHeader);
              return create(BlocksResultSchema, { subject: request.subject });
            },
            creditCoins(_request, ctx) {
              arrive("creditCoins", ctx.requestHeader);
              return create(CoinsBalanceResultSchema, {});
            },
          });
          router.service(PasteService, {
            async *getRawPaste(_request, ctx) {
              arrive("getRawPaste", ctx.requestHeader);
              yield create(PasteRawResultSchema, {});
            },
          });
        },
        { transport: { interceptors } },
      ),
  });
  return { pf, calls, headers: () => headers };
}

const busy = () => problem(503, "service.busy", "Too many calls at once; try again shortly.");

describe("a platform client's Connect calls", () => {
  it("carry the caller's token and X-PF-* headers, a call's own header winning", async () => {
    const { pf, headers } = overFailures([], {
      token: async () => "t0ken",
      subject: "usr_alice",
      staff: true,
      origin: "ai",
      groups: ["editors", "mods"],
      entitlements: [],
    });
    await pf.network.getBlocks({ subject: "usr_alice" });
    expect(Object.fromEntries([...headers()].filter(([name]) => /^(authorization|x-pf-)/.test(name)))).toEqual({
      authorization: "Bearer t0ken",
      "x-pf-subject": "usr_alice",
      "x-pf-staff": "1",
      "x-pf-origin": "ai",
      "x-pf-groups": "editors,mods",
      "x-pf-entitlements": "",
    });
    await pf.network.getBlocks({ subject: "usr_bob" }, { headers: { "x-pf-subject": "usr_bob" } });
    expect(headers().get("x-pf-subject")).toBe("usr_bob");
    const anonymous = overFailures([]);
    await anonymous.pf.network.getBlocks({});
    expect([...anonymous.headers().keys()].filter((name) => /^(authorization|x-pf-)/.test(name))).toEqual([]);
  });

  it("try a read bound to GET again after a 503, or after failing to connect", async () => {
    for (const failure of [busy(), new ConnectError("connection refused", Code.Unavailable)]) {
      const { pf, calls } = overFailures([failure]);
      expect(await pf.network.getBlocks({ subject: "usr_alice" })).toMatchObject({ subject: "usr_alice" });
      expect(calls).toEqual(["getBlocks", "getBlocks"]);
    }
  });

  it("try a write again only when it carries an idempotency key, in its request or its header", async () => {
    const once = overFailures([busy()]);
    const refused = await once.pf.network.creditCoins({ subject: "usr_alice", amount: 5n }).catch((e: unknown) => e);
    expect((refused as PlatformError).problem).toMatchObject({ code: "service.busy", status: 503 });
    expect(once.calls).toEqual(["creditCoins"]);

    const keyed = overFailures([busy()]);
    await keyed.pf.network.creditCoins({ subject: "usr_alice", amount: 5n, idempotencyKey: "credit-1" });
    expect(keyed.calls).toEqual(["creditCoins", "creditCoins"]);

    const headed = overFailures([busy()]);
    await headed.pf.network.creditCoins(
      { subject: "usr_alice", amount: 5n },
      { headers: { "idempotency-key": "c-2" } },
    );
    expect(headed.calls).toEqual(["creditCoins", "creditCoins"]);
  });

  it("answer at once a 429 telling no time (a spent quota), a 413, and any failure of a stream", async () => {
    for (const failure of [
      problem(429, "quota.exceeded", "The quota q of 10 would be passed."),
      problem(413, "paste.too_large", "Too large."),
    ]) {
      const { pf, calls } = overFailures([failure]);
      const refused = await pf.network.getBlocks({}).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PlatformError);
      expect(calls).toHaveLength(1);
    }
    const streamed = overFailures([busy()]);
    const read = async () => {
      for await (const _ of streamed.pf.paste.getRawPaste({ slug: "a" }));
    };
    await expect(read()).rejects.toBeInstanceOf(PlatformError);
    expect(streamed.calls).toEqual(["getRawPaste"]);
  });

  it("give up with the call's deadline while waiting for a retry", async () => {
    const { pf, calls } = overFailures([
      problem(503, "service.busy", "Busy.", { retry_after_seconds: 5 }),
      problem(503, "service.busy", "Busy.", { retry_after_seconds: 5 }),
    ]);
    const started = Date.now();
    const failed = await pf.network.getBlocks({}, { timeoutMs: 200 }).catch((error: unknown) => error);
    expect(ConnectError.from(failed).code).toBe(Code.DeadlineExceeded);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(calls).toEqual(["getBlocks"]);
  });

  it("try nothing again when retries are off", async () => {
    const { pf, calls } = overFailures([busy()], { retries: false });
    await expect(pf.network.getBlocks({})).rejects.toBeInstanceOf(PlatformError);
    expect(calls).toHaveLength(1);
  });
});

describe("a platform fetch helper's requests", () => {
  /** A fetch helper whose requests are answered from `statuses` in turn, 200 once they run out; what was sent. */
  function answering(statuses: number[], retryAfter?: string) {
    const sent: { method: string; url: string; headers: Headers; body: string }[] = [];
    const api = createPlatformFetch({
      baseUrl: "http://gateway.test",
      token: "t0ken",
      subject: "usr_alice",
      retries: { backoffMs: 1 },
      fetch: async (request) => {
        sent.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
        const status = statuses.shift() ?? 200;
        return new Response(JSON.stringify(status === 200 ? {} : { code: "x", status }), {
          status,
          headers: { "content-type": "application/json", ...(retryAfter && { "retry-after": retryAfter }) },
        });
      },
    });
    return { api, sent };
  }

  it("carry the caller's token and X-PF-* headers", async () => {
    const { api, sent } = answering([]);
    await api.GET("/network/internal/blocks", { params: { query: { subject: "usr_alice" } } });
    expect(sent[0].url).toBe("http://gateway.test/network/internal/blocks?subject=usr_alice");
    expect(sent[0].headers.get("authorization")).toBe("Bearer t0ken");
    expect(sent[0].headers.get("x-pf-subject")).toBe("usr_alice");
  });

  it("try a GET again after a 503, and after a 429 with Retry-After only", async () => {
    const blocksOfAlice = { params: { query: { subject: "usr_alice" } } };
    const busy = answering([503]);
    expect((await busy.api.GET("/network/internal/blocks", blocksOfAlice)).response.status).toBe(200);
    expect(busy.sent).toHaveLength(2);
    const limited = answering([429], "0");
    expect((await limited.api.GET("/network/internal/blocks", blocksOfAlice)).response.status).toBe(200);
    expect(limited.sent).toHaveLength(2);
    const spent = answering([429]);
    expect((await spent.api.GET("/network/internal/blocks", blocksOfAlice)).error).toMatchObject({ status: 429 });
    expect(spent.sent).toHaveLength(1);
  });

  it("try a write again only with an idempotency key, in its JSON body or its header", async () => {
    const body = { subject: "usr_alice", amount: "5" };
    const once = answering([503]);
    expect((await once.api.POST("/network/internal/coins/credit", { body })).response.status).toBe(503);
    expect(once.sent).toHaveLength(1);
    const keyed = answering([503]);
    await keyed.api.POST("/network/internal/coins/credit", { body: { ...body, idempotency_key: "credit-1" } });
    expect(keyed.sent.map((each) => JSON.parse(each.body) as unknown)).toEqual([
      { ...body, idempotency_key: "credit-1" },
      { ...body, idempotency_key: "credit-1" },
    ]);
    const headed = answering([503]);
    await headed.api.POST("/network/internal/coins/credit", { body, headers: { "idempotency-key": "credit-2" } });
    expect(headed.sent).toHaveLength(2);
  });
});
