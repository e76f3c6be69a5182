import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type SpanProcessor } from "@opentelemetry/sdk-trace";
import pg from "pg";

/**
 * Tracing with OpenTelemetry, one tracer provider per process: on when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set (spans batched to it over OTLP/HTTP),
 * off otherwise. Off, every helper here answers at once and no span is made;
 * the host leaves the tracing interceptors out altogether.
 */
let tracer: Tracer | undefined;
let provider: TracerProvider | undefined;
let contextManagerSet = false;

const propagator = new W3CTraceContextPropagator();
const TRACEPARENT = "traceparent";

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/**
 * Starts exporting over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, unless this process traces already. Read from
 * `process.env`, where the exporter itself reads the endpoint (adding /v1/traces) and the other OTEL_EXPORTER_OTLP_*.
 */
export function tracingFromEnvironment(): void {
  if (tracer || !process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  startTracing(new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }), processName());
}

/** This process's name (`OTEL_SERVICE_NAME`, default `pf-platform`): its spans', log lines' and metrics'. */
export function processName(): string {
  return process.env.OTEL_SERVICE_NAME || "pf-platform";
}

/** Traces this process into `processor` (tests: a SimpleSpanProcessor over an InMemorySpanExporter). */
export function startTracing(processor: SpanProcessor, serviceName = "pf-platform"): void {
  if (!contextManagerSet) {
    // Another context manager registered first is kept: it carries the active span as well.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ "service.name": serviceName })),
    spanProcessors: [processor],
  });
  tracer = provider.getTracer("pf");
  traceQueries();
}

let queriesTraced = false;

/**
 * Each query a traced call sends to PostgreSQL is a client span `pg <OPERATION>` (`pg SELECT`), child of the call's
 * span: pg's `Client.query` wrapped once per process, as OpenTelemetry's pg instrumentation does. Only promise
 * queries inside a span (a call's, a consumer's): background loops make no traces of their own. The SQL's text is
 * left out (a statement may carry values), its first word kept.
 */
function traceQueries(): void {
  if (queriesTraced) return;
  queriesTraced = true;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const parent = context.active();
    const [config, values, callback] = args as [{ text?: string; submit?: unknown } | string, unknown, unknown];
    const plain = typeof values !== "function" && callback === undefined && typeof config !== "function";
    const submittable = typeof config === "object" && typeof config.submit === "function";
    if (!tracer || !plain || submittable || !trace.getSpan(parent)) return query.apply(this, args);
    const text = typeof config === "string" ? config : (config.text ?? "");
    const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "QUERY";
    const span = tracer.startSpan(
      `pg ${operation}`,
      { kind: SpanKind.CLIENT, attributes: { "db.system.name": "postgresql", "db.operation.name": operation } },
      parent,
    );
    return (query.apply(this, args) as Promise<unknown>).then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        failed(span, error);
        span.end();
        throw error;
      },
    );
  } as typeof pg.Client.prototype.query;
}

/** Sends what is still buffered (a stopping platform). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush().catch(() => undefined);
}

/** Stops tracing in this process, exporting what is buffered first. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  tracer = undefined;
  provider = undefined;
  await stopping?.shutdown();
}

/** The W3C traceparent of the span active now; undefined when tracing is off or no span is active. */
export function activeTraceparent(): string | undefined {
  if (!tracer) return undefined;
  return traceparentOf(context.active());
}

/** The traceparent of a context's span, as the W3C header carries it. */
export function traceparentOf(ctx: Context): string | undefined {
  if (!trace.getSpanContext(ctx)) return undefined;
  const carrier: Record<string, string> = {};
  propagator.inject(ctx, carrier, { set: (c, key, value) => (c[key] = value) });
  return carrier[TRACEPARENT];
}

/** The context a `traceparent` sent by a caller or carried by an event continues; a new trace when none or malformed. */
export function contextOf(traceparent: string | undefined | null): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return propagator.extract(
    ROOT_CONTEXT,
    { [TRACEPARENT]: traceparent },
    { get: (c, key) => c[key], keys: Object.keys },
  );
}

/**
 * Runs `work` in a new span, child of `parent`, active while it runs (log lines,
 * calls and events it makes carry it). A failure is recorded on the span by
 * `recordFailure` (by default: marked failed) and thrown on. Tracing off, `work` runs alone.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  parent: Context,
  work: (span: Span | undefined) => Promise<T>,
  recordFailure: (span: Span, error: unknown) => void = failed,
): Promise<T> {
  if (!tracer) return work(undefined);
  const span = tracer.startSpan(name, options, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Runs `work` in no span: background work a traced call merely woke up (the outbox relay) starts traces of its own. */
export function outsideSpan<T>(work: () => T): T {
  return tracer ? context.with(ROOT_CONTEXT, work) : work();
}

/** A span the caller ends itself (an HTTP request, ended when answered); undefined when tracing is off. */
export function startSpan(name: string, options: SpanOptions, parent: Context): Span | undefined {
  return tracer?.startSpan(name, options, parent);
}

/** Marks a span failed by `error`. */
function failed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** The ids a log line written in a span carries; undefined when tracing is off or no span is active. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!tracer) return undefined;
  const span = trace.getSpanContext(context.active());
  return span && { trace_id: span.traceId, span_id: span.spanId };
}

/** A request's trace, kept while its work waits (see `currentTraceContext`). */
export type KeptTrace = Context;

/** The trace a request runs in now, kept to continue it later (work queued and done for many requests together). */
export function currentTraceContext(): Context {
  return context.active();
}

/** Whether a kept context carries a span (tracing on, a traced request). */
export function traced(kept: Context): boolean {
  return trace.getSpanContext(kept) !== undefined;
}

/** Runs `work` in a kept context: what it records (events, log lines) belongs to that request's trace. */
export function inTraceContext<T>(kept: Context, work: () => T): T {
  return context.with(kept, work);
}
