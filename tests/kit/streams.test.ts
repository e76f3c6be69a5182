import { create } from "@bufbuild/protobuf";
import {
  ConnectError,
  createClient,
  createRouterTransport,
  type ConnectRouter,
  type HandlerContext,
} from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
} from "../../gen/grpc/health/v1/health_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { callScope } from "../../services/kit/runtime/call.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { implement } from "../../services/kit/rpc/implementation.js";
import { CallGuard } from "../../services/kit/rpc/guard.js";
import { serveRpc, type RpcServer } from "../../services/kit/rpc/server.js";
import { until } from "../support/until.js";

/**
 * A server-streaming handler parked at a `yield` its client will never read
 * (the client took one message and went away) still runs its `finally`: what
 * it holds open (live listeners, timers) is let go, in memory and over gRPC.
 */

function watched() {
  const state = { finished: false, aborted: false };
  const { impl } = implement(Health, {
    check: () => create(HealthCheckResponseSchema),
    async *watch(_request, context: HandlerContext) {
      context.signal.addEventListener("abort", () => (state.aborted = true));
      try {
        // Never waits on its signal: only a read or a return moves it on.
        for (;;) yield { status: HealthCheckResponse_ServingStatus.SERVING };
      } finally {
        state.finished = true;
      }
    },
  });
  // Behind the host's outer interceptors, as every pf service is.
  const interceptors = [callScope(100), new CallGuard(createLogger("silent")).interceptor()];
  const routes = (router: ConnectRouter) => router.service(Health, impl as never, { interceptors });
  return { state, routes };
}

async function takeOneThenCancel(client: ReturnType<typeof createClient<typeof Health>>): Promise<void> {
  const gone = new AbortController();
  const messages = client.watch({}, { signal: gone.signal })[Symbol.asyncIterator]();
  expect((await messages.next()).value).toMatchObject({ status: HealthCheckResponse_ServingStatus.SERVING });
  gone.abort();
}

let server: RpcServer | undefined;
afterEach(async () => {
  await server?.stopAccepting();
  await server?.close();
  server = undefined;
});

describe("a server-streaming handler whose client went away", () => {
  it("runs its finally over the in-memory router transport", async () => {
    const { state, routes } = watched();
    await takeOneThenCancel(createClient(Health, createRouterTransport(routes)));
    await until(() => state.aborted, 2_000);
    expect(state.aborted).toBe(true);
    await until(() => state.finished, 2_000);
    expect(state.finished).toBe(true);
  });

  it("runs its finally over gRPC on the RPC port", async () => {
    const { state, routes } = watched();
    server = await serveRpc(routes, { port: 0, host: "127.0.0.1", readMaxBytes: 1 << 20, bodyTimeoutMs: 30_000 });
    await takeOneThenCancel(createClient(Health, createGrpcTransport({ baseUrl: server.url })));
    await until(() => state.aborted, 2_000);
    expect(state.aborted).toBe(true);
    await until(() => state.finished, 2_000);
    expect(state.finished).toBe(true);
  });
});

describe("a server-streaming handler that crashes after its first message", () => {
  it("is answered as a bare 500 without its internals over gRPC, as a unary crash is", async () => {
    const { impl } = implement(Health, {
      check: () => create(HealthCheckResponseSchema),
      async *watch() {
        yield { status: HealthCheckResponse_ServingStatus.SERVING };
        throw new TypeError("cannot read secret_column of undefined");
      },
    });
    const guard = new CallGuard(createLogger("silent"));
    server = await serveRpc(
      (router) => router.service(Health, impl as never, { interceptors: [guard.interceptor()] }),
      { port: 0, host: "127.0.0.1", readMaxBytes: 1 << 20, bodyTimeoutMs: 30_000 },
    );
    const received: unknown[] = [];
    const failure = await (async () => {
      for await (const message of createClient(Health, createGrpcTransport({ baseUrl: server!.url })).watch({}))
        received.push(message);
    })().catch((error: unknown) => ConnectError.from(error));
    expect(received).toHaveLength(1);
    expect(failure).toBeInstanceOf(ConnectError);
    expect(failure!.message).not.toContain("secret_column");
    expect(failure!.findDetails(ProblemSchema)[0]).toMatchObject({ status: 500, code: "internal" });
  });
});
