import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { contextOf, startSpan, traceparentOf, tracingOn } from "../services/kit/runtime/tracing.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** A binding's route as written (`/billing/api/v1/webhooks/{provider}`). */
    route?: string;
  }
}

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * Each routed request is a server span `<METHOD> <route>`, the route as its
 * binding writes it (`POST /tips/api/v1/checkout`), child of the client's
 * `traceparent` (a new trace without one), ended when answered with its
 * status. Its RPC continues it: `forwardedHeaders` sends the span as the
 * call's `traceparent`. Registered only while tracing is on.
 */
export function traceRequests(app: FastifyInstance): void {
  app.addHook("onRequest", (request, _reply, done) => {
    if (request.is404) return done();
    const route = routeOf(request);
    const sent = request.headers.traceparent;
    const span = startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": request.method, "http.route": route, "pf.request_id": request.id },
      },
      contextOf(typeof sent === "string" ? sent : undefined),
    );
    if (span) spans.set(request, span);
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute("http.response.status_code", reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}

/** The request's route as its binding writes it (`/tips/api/v1/checkout`), or Fastify's; "" when none answers it. */
export function routeOf(request: FastifyRequest): string {
  const { config, url } = request.routeOptions;
  return config.route ?? url ?? "";
}

/** The traceparent the request's RPC carries: its gateway span; undefined when tracing is off. */
export function requestTraceparent(request: FastifyRequest): string | undefined {
  if (!tracingOn()) return undefined;
  const span = spans.get(request);
  return span && traceparentOf(trace.setSpan(ROOT_CONTEXT, span));
}
