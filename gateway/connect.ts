import type { DescMethod } from "@bufbuild/protobuf";
import { ConnectError, createContextValues, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import type { FastifyInstance } from "fastify";
import type { Implementation } from "../services/kit/rpc/implementation.js";
import { refusalInProtocol } from "../services/kit/rpc/front-door.js";
import { handlerOptions } from "../services/kit/rpc/server.js";
import { onPublicSurface } from "../services/kit/rpc/surface.js";
import type { Logger } from "../services/kit/runtime/logger.js";
import { admissionHook, admittedRequest, type Refusal } from "./admission.js";
import { forwardedHeaders } from "./headers.js";
import type { Admitting } from "./route-context.js";

/** What the gateway's port serves over Connect: its process's implementations, called as its RPC port calls them. */
export interface ConnectServing {
  readonly implementations: readonly Implementation[];
  /** The interceptors of every call on the RPC port (enforcement, input guard, rate limits, …). */
  readonly interceptors: Interceptor[];
}

/**
 * The RPCs the gateway's port serves over Connect, by their standard path
 * `/<package>.<Service>/<Method>`: the public and first-party surface of the
 * process's implementations, the RPCs the public OpenAPI document shows.
 * Internal and partner RPCs stay on the RPC port.
 */
export function connectPaths(serving: ConnectServing | undefined): Map<string, DescMethod> {
  const paths = new Map<string, DescMethod>();
  for (const { service } of serving?.implementations ?? [])
    for (const method of service.methods.filter(onPublicSurface))
      paths.set(`/${service.typeName}/${method.name}`, method);
  return paths;
}

/**
 * Connect, gRPC-Web and gRPC (HTTP/1.1: what a client can do with trailers
 * there) on the gateway's port, through `@connectrpc/connect-fastify`, beside
 * the JSON routes, so a browser's `baseUrl` is the gateway's URL:
 *
 * - The same handlers through the same interceptors as the RPC port, with the
 *   headers the JSON routes forward (the client's address, the request id).
 * - Admitted before the body is read, as every JSON route (`admissionHook`),
 *   the refusal answered in the caller's protocol as the RPC port's front door
 *   answers it; the call takes that admission instead of repeating it.
 * - A message is at most `bodyLimit` bytes (`handlerOptions`); a request that is
 *   one message must arrive within the gateway's body deadline; client streams
 *   are read as they come. Server streams end when the gateway closes.
 * - Bidirectional streams need HTTP/2 (Connect answers 505 over HTTP/1.1), so
 *   reflection, one of them, stays on the RPC port.
 */
export async function registerConnect(
  app: FastifyInstance,
  serving: ConnectServing,
  context: { admission: Admitting; logger: Logger; bodyLimit: number },
): Promise<void> {
  const paths = connectPaths(serving);
  const closing = new AbortController();
  app.addHook("preClose", (done) => {
    closing.abort();
    done();
  });
  const impls = new Map(serving.implementations.map(({ service, impl }) => [service, impl]));
  const routes = (router: ConnectRouter) => {
    for (const method of paths.values()) {
      const impl = impls.get(method.parent)!;
      const handler = impl[method.localName] as ((...args: never[]) => unknown) | undefined;
      // A method the implementation leaves out is not routed (404, `unimplemented` to Connect clients).
      if (handler === undefined) continue;
      router.rpc(method, handler.bind(impl) as never, {
        interceptors: serving.interceptors,
        ...(method.methodKind === "server_streaming" && { shutdownSignal: closing.signal }),
      });
    }
  };

  await app.register(async (scope) => {
    // Connect reads its own bodies (connect-fastify adds its parsers); the JSON routes' parser stays outside.
    scope.removeAllContentTypeParsers();
    scope.addHook("onRoute", (route) => {
      const method = paths.get(route.url);
      if (!method) return;
      // A client stream is read as it arrives: the whole-body deadline of one message does not apply.
      if (method.methodKind === "client_streaming") route.config = { ...route.config, streamsBody: true };
      route.onRequest = admissionHook(method, context, inProtocol);
    });
    // The RPC reads the request's own headers: those the gateway sets for every call go in first.
    scope.addHook("onRequest", (request, _reply, done) => {
      Object.assign(request.raw.headers, forwardedHeaders(request));
      done();
    });
    await scope.register(fastifyConnectPlugin, {
      routes,
      ...handlerOptions(context.bodyLimit),
      contextValues: (request) => admittedRequest(request)?.values ?? createContextValues(),
    });
  });
}

/** A refusal as the RPC port answers it: in the caller's protocol, before its body is read. */
const inProtocol: Refusal = (request, reply, error) => {
  const { status, header, body } = refusalInProtocol(
    String(request.headers["content-type"] ?? ""),
    ConnectError.from(error),
  );
  void reply
    .code(status)
    .headers(header)
    .send(body && Buffer.from(body.buffer, body.byteOffset, body.byteLength));
};
