import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { SpanKind, SpanStatusCode, type Span } from "@opentelemetry/api";
import { ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";
import { codeName } from "../handler/problem.js";
import { activeTraceparent, contextOf, inSpan } from "../runtime/tracing.js";
import { keyOf } from "./clients.js";

const TRACEPARENT = "traceparent";

/**
 * Server side: each unary call is a span named `<service>/<method>` (`tips/CreateCheckout`),
 * child of the caller's `traceparent` (a new trace without one), holding the
 * Connect code and problem of a failure. Registered only while tracing is on.
 * Server streams are not traced: an overlay stream lasts hours.
 */
export function traceCalls(): Interceptor {
  const names = new Map<DescMethod, string>();
  const nameOf = (method: DescMethod) => {
    let name = names.get(method);
    if (name === undefined) names.set(method, (name = `${keyOf(method.parent)}/${method.name}`));
    return name;
  };
  return (next) => (req) => {
    if (req.stream) return next(req);
    const attributes = {
      "rpc.system": "connect_rpc",
      "rpc.service": req.service.typeName,
      "rpc.method": req.method.name,
    };
    return inSpan(
      nameOf(req.method),
      { kind: SpanKind.SERVER, attributes },
      contextOf(req.header.get(TRACEPARENT)),
      async (span) => {
        try {
          return await next(req);
        } finally {
          // Set by the call scope inside: the id on the call's log lines.
          const requestId = req.header.get("x-request-id");
          if (requestId) span?.setAttribute("pf.request_id", requestId);
        }
      },
      recordCallFailure,
    );
  };
}

/** Client side: a call made while a span is active carries it as `traceparent`, over the network or in memory. */
export function propagateTrace(): Interceptor {
  return (next) => (req) => {
    const traceparent = activeTraceparent();
    if (traceparent) req.header.set(TRACEPARENT, traceparent);
    return next(req);
  };
}

/** Codes that are the server's failure; the others are the caller's (a refusal, a missing row) and leave the span unset. */
const SERVER_FAULTS = new Set([
  Code.Unknown,
  Code.DeadlineExceeded,
  Code.Unimplemented,
  Code.Internal,
  Code.Unavailable,
  Code.DataLoss,
]);

function recordCallFailure(span: Span, error: unknown): void {
  const failure = ConnectError.from(error);
  span.setAttribute("rpc.connect_rpc.error_code", codeName(failure.code));
  const [found] = failure.findDetails(ProblemSchema);
  if (found) span.setAttributes({ "pf.problem.code": found.code, "pf.problem.status": found.status });
  if (SERVER_FAULTS.has(failure.code)) {
    span.recordException(failure);
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure.rawMessage });
  }
}
