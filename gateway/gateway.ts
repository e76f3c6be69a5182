import { createRegistry, type DescFile, type DescService } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../services/kit/runtime/config.js";
import type { Logger } from "../services/kit/runtime/logger.js";
import { problemMessage, problemType } from "../services/kit/handler/problem.js";
import { bindingsOf, type Binding } from "./bindings.js";
import { bodyDeadline, closeAfterAnswer } from "./connection.js";
import { connectPaths, registerConnect, type ConnectServing } from "./connect.js";
import { OPEN_TO_ANY_ORIGIN, registerCors } from "./cors.js";
import { REQUEST_ID_HEADER, requestIdOf } from "./headers.js";
import { parseJsonText } from "./json-text.js";
import { registerDocs } from "./docs.js";
import { serveAsyncApi } from "./asyncapi.js";
import { openApiDocument, publiclyDocumented, type DocumentScope } from "./openapi.js";
import { instanceOf, problemOfFastify, sendFailure, sendProblem } from "./problems.js";
import type { Admitting } from "./route-context.js";
import { RouteTable } from "./route-table.js";
import { mountPoints, registerBindings } from "./routes.js";
import { traceRequests } from "./tracing.js";
import { logRequests, type ProblemAnswer } from "./access-log.js";
import { tracingOn } from "../services/kit/runtime/tracing.js";

export interface GatewayOptions {
  /** Proto services to expose, each with its pf.v1.service_key option. */
  services: DescService[];
  /** The transport internal callers use; every call goes through the services' interceptors. */
  transport: Transport;
  /** The services' enforcement, applied before the gateway reads a request (401 before any shape check). */
  admission: Admitting;
  /** Uses bodyLimit, corsOrigins, hostRouting, callTimeoutMs, webSocketPingMs, and natsUrl with natsNamespace (the AsyncAPI server). */
  config: Config;
  logger: Logger;
  /** Reachability of what the process depends on, for /readyz. */
  readiness(): Promise<Record<string, boolean>>;
  /** What must hold for the process to be worth keeping, for /healthz; unset: it always is. */
  liveness?(): Promise<Record<string, boolean>>;
  /** Told of every answer of 400 or more (the refusal counter); unset: nothing counts them. */
  problems?: (answer: ProblemAnswer) => void;
  /** The process's own services, served over Connect and gRPC-Web beside the JSON routes (connect.ts); unset: none. */
  connect?: ConnectServing;
}

export interface Gateway {
  app: FastifyInstance;
  /** Starts listening; answers the base URL (http://host:port). */
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<void>;
}

/** The HTTP/JSON front door: routes built from the services' google.api.http bindings, nothing per route by hand. */
export async function buildGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  const bindings = options.services.flatMap(bindingsOf);
  const app = Fastify({
    // Fastify's own request logging costs a child logger per request: the access log (access-log.ts) writes one line.
    logger: false,
    bodyLimit: config.bodyLimit,
    // Not Fastify's own reading of the header, which takes any value as sent.
    requestIdHeader: false,
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: 1024 },
    // Malformed URLs fail before routing (and before the onRequest hook); they are problems too.
    frameworkErrors: (error, request, reply) => {
      answerFastifyError(error, request, reply.header(REQUEST_ID_HEADER, request.id));
    },
    // Requests Node cannot even parse (bad header lines, oversized headers) get a problem too.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy();
      const code = (error as { code?: string }).code;
      const status = code === "HPE_HEADER_OVERFLOW" ? 431 : code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
      const title = STATUS_CODES[status] ?? "";
      const body = JSON.stringify({
        type: problemType("request.invalid"),
        title,
        status,
        detail: status === 408 ? "The request did not arrive in time." : "The request could not be read as HTTP.",
        instance: "",
        code: "request.invalid",
      });
      socket.end(
        `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    },
  });
  const answerFastifyError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const found = problemOfFastify(error, config.bodyLimit);
    if (found.status >= 500) return sendFailure(request, reply, error, logger);
    return sendProblem(reply, found, instanceOf(request));
  };

  jsonBodiesOnly(app);
  // Filled when the bindings are registered: what CORS preflights and 405 answers look up.
  const routes = new RouteTable();
  await registerCors(app, config.corsOrigins, bindings, routes, config.env, connectPaths(options.connect));
  app.addHook("onRequest", (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  logRequests(app, logger, options.problems);
  if (tracingOn()) traceRequests(app);
  app.setErrorHandler(answerFastifyError);
  // A path no binding answers (404), or answers for another method (405), is answered before any body is read.
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const path = instanceOf(request);
    const allow = routes.allowed(request.headers.host ?? "", path);
    if (allow.length === 0)
      return sendProblem(
        reply,
        problemMessage(404, "route.not_found", `No route answers ${request.method} ${path}.`),
        path,
      );
    const methods = allow.join(", ");
    return sendProblem(
      reply.header("allow", methods),
      problemMessage(
        405,
        "route.method_not_allowed",
        `${request.method} is not allowed on this path; it answers ${methods}.`,
      ),
      path,
    );
  };
  app.addHook("onRequest", bodyDeadline(config.bodyTimeoutMs));
  endAnsweredUpgrades(app);
  app.addHook("onRequest", (request, reply, done) => {
    if (!request.is404) return done();
    answerUnrouted(request, closeAfterAnswer(request, reply));
  });
  app.setNotFoundHandler(answerUnrouted);

  app.get("/healthz", async (_request, reply) => {
    const checks = await (options.liveness?.() ?? Promise.resolve({})).catch((error: unknown) => {
      logger.error({ err: error }, "liveness check failed");
      return { liveness: false };
    });
    const live = Object.values(checks).every(Boolean);
    return sendJson(reply, live ? 200 : 503, live ? { status: "ok" } : { status: "unavailable", checks });
  });
  app.get("/readyz", async (_request, reply) => {
    const checks = await options.readiness().catch((error: unknown) => {
      logger.error({ err: error }, "readiness check failed");
      return { readiness: false };
    });
    const ready = Object.values(checks).every(Boolean);
    return sendJson(reply, ready ? 200 : 503, { status: ready ? "ok" : "unavailable", checks });
  });
  serveOpenApi(app, bindings, { hostRouting: config.hostRouting, admission: options.admission, logger });
  serveAsyncApi(app, [...new Set(bindings.map((binding) => binding.key))], config);
  registerDocs(app, [...new Set(bindings.map((binding) => binding.key))].sort());

  const openStreams = new Set<AbortController>();
  // Event streams never end on their own: a closing gateway ends them, or they would hold it for the whole grace.
  app.addHook("preClose", (done) => {
    for (const stream of openStreams) stream.abort();
    done();
  });
  registerBindings(
    app,
    bindings,
    config.hostRouting,
    {
      transport: options.transport,
      admission: options.admission,
      timeoutMs: config.callTimeoutMs,
      bodyTimeoutMs: config.bodyTimeoutMs,
      uploadMinRate: config.uploadMinRate,
      bodyLimit: config.bodyLimit,
      webSocketPingMs: config.webSocketPingMs,
      registry: createRegistry(...filesOf(options.services)),
      logger,
      openStreams,
    },
    routes,
  );
  if (options.connect)
    await registerConnect(app, options.connect, { admission: options.admission, logger, bodyLimit: config.bodyLimit });

  return {
    app,
    async listen({ port, host }) {
      await app.listen({ port, host });
      const address = app.server.address() as AddressInfo;
      return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
    },
    close: () => closeGracefully(app),
  };
}

/**
 * A request asking for an upgrade that is answered over HTTP (a route that is no WebSocket's, a refusal) ends its
 * connection with the answer: Node hands such a socket to the WebSocket plugin, and no parser reads another request
 * from it.
 */
function endAnsweredUpgrades(app: FastifyInstance): void {
  // Set by Node's parser on a request it hands to the server's `upgrade` listeners.
  const upgrading = (request: FastifyRequest) => (request.raw as { upgrade?: boolean }).upgrade === true;
  app.addHook("onRequest", (request, reply, done) => {
    if (upgrading(request)) reply.header("connection", "close");
    done();
  });
  app.addHook("onResponse", (request, _reply, done) => {
    if (upgrading(request)) request.raw.socket.end();
    done();
  });
}

/**
 * Bodies are JSON (json-text.ts: too wide or deep refused before parsing, safe
 * against prototype poisoning) or nothing: other media types answer 415, and an
 * empty JSON body is no body.
 */
function jsonBodiesOnly(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    if (body === "") return done(null, undefined);
    try {
      done(null, parseJsonText(body as string));
    } catch (error) {
      done(error as Error);
    }
  });
}

/**
 * `/openapi.json` of everything, and `/<key>/openapi.json` of one service (also at the root of its routed hosts):
 * each whole to callers with a service token, else only its public and first-party routes; to any origin (cors.ts).
 */
function serveOpenApi(
  app: FastifyInstance,
  bindings: readonly Binding[],
  context: { hostRouting: Record<string, string>; admission: Admitting; logger: Logger },
): void {
  const serve = (documented: readonly Binding[], scope: DocumentScope) => {
    // Made at the first request, not at start: they take a good part of a start's CPU (bench/README.md).
    let whole: string | undefined;
    let open: string | undefined;
    return (request: FastifyRequest, reply: FastifyReply) => {
      context.admission
        .discoversInternals(request.headers.authorization ?? null)
        .then((internals) =>
          internals
            ? (whole ??= JSON.stringify(openApiDocument(documented, scope)))
            : (open ??= JSON.stringify(openApiDocument(documented.filter(publiclyDocumented), scope))),
        )
        .then(
          (document) => {
            // Appended: CORS may have said Vary: Origin already.
            const vary = reply.getHeader("vary");
            reply.header("vary", vary ? `${String(vary)}, Authorization` : "Authorization");
            reply.type("application/json").send(document);
          },
          (error: unknown) => sendFailure(request, reply, error, context.logger),
        );
    };
  };
  app.get("/openapi.json", { config: OPEN_TO_ANY_ORIGIN }, serve(bindings, { title: "pf platform" }));
  for (const key of new Set(bindings.map((binding) => binding.key))) {
    const own = bindings.filter((binding) => binding.key === key);
    const handler = serve(own, { title: `pf ${key}`, basePath: `/${key}` });
    for (const point of mountPoints(key, context.hostRouting)) {
      app.route({
        method: "GET",
        url: `${point.prefix}/openapi.json`,
        config: OPEN_TO_ANY_ORIGIN,
        handler,
        ...(point.constraints && { constraints: point.constraints }),
      });
    }
  }
}

function sendJson(reply: FastifyReply, status: number, body: object): FastifyReply {
  return reply.code(status).type("application/json").send(JSON.stringify(body));
}

/** The services' files and everything they import, so JSON can name any of their types (Any, extensions). */
function filesOf(services: readonly DescService[]): DescFile[] {
  const files = new Set<DescFile>();
  const add = (file: DescFile) => {
    if (files.has(file)) return;
    files.add(file);
    file.dependencies.forEach(add);
  };
  services.forEach((service) => add(service.file));
  return [...files];
}

/** How long requests being answered get when the gateway stops. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Stops taking requests and lets those being answered finish. A keep-alive
 * socket whose answer went out after the close began would otherwise stay open
 * until its keep-alive timeout (72 s), holding the whole stop.
 */
async function closeGracefully(app: FastifyInstance): Promise<void> {
  const closed = app.close();
  const sweeper = setInterval(() => app.server.closeIdleConnections(), 100);
  const grace = new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
  await Promise.race([closed, grace]);
  clearInterval(sweeper);
  app.server.closeAllConnections();
  await closed;
}
