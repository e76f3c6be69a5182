import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { problemMessage } from "../services/kit/handler/problem.js";
import { instanceOf, sendProblem } from "./problems.js";

/** Whether the request announces a body. */
function sendsBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined;
}

/**
 * A request answered before its body was read closes its connection with the
 * answer, so the body is never read at all (rather than read and thrown away
 * to reuse the connection).
 */
export function leaveBodyUnread(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendsBody(request) ? reply.header("connection", "close") : reply;
}

/**
 * A body must have arrived `timeoutMs` after its request began; a body sent a
 * byte a second is answered 408 and its connection closed, not waited for.
 */
export function bodyDeadline(timeoutMs: number): onRequestHookHandler {
  return (request, reply, done) => {
    // A route reading its body as it arrives (uploads.ts) watches it for idleness instead.
    const streams = (request.routeOptions.config as { streamsBody?: boolean } | undefined)?.streamsBody === true;
    if (sendsBody(request) && !streams) {
      const timer = setTimeout(() => {
        if (reply.sent) return;
        sendProblem(
          reply.header("connection", "close"),
          problemMessage(408, "request.timeout", `The body did not arrive within ${timeoutMs} ms.`),
          instanceOf(request),
        );
      }, timeoutMs);
      timer.unref();
      const clear = () => clearTimeout(timer);
      request.raw.once("end", clear);
      request.raw.once("close", clear);
    }
    done();
  };
}
