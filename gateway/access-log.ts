import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "../services/kit/runtime/logger.js";
import { admittedRequest } from "./admission.js";
import { problemCodeOf } from "./problems.js";
import { routeOf } from "./tracing.js";

/** A request answered with a problem: what the refusal counter counts it by. */
export interface ProblemAnswer {
  method: string;
  /** The route template (`/tips/api/v1/checkout`); "" when no route answers the path. */
  route: string;
  status: number;
  /** The problem's code (`auth.required`); "" for an answer the gateway did not write as a problem (Connect). */
  code: string;
}

/**
 * One info line per answered request: method, route template (never the path:
 * it may hold ids, a query a secret), status, duration, request id and the kind
 * of principal admitted (`anonymous` without a token, `unadmitted` for a token
 * not admitted); never the token. Every answer of 400 or more is also told to
 * `problem` (the refusal counter).
 */
export function logRequests(app: FastifyInstance, logger: Logger, problem?: (answer: ProblemAnswer) => void): void {
  app.addHook("onResponse", (request, reply, done) => {
    const status = reply.statusCode;
    const counted = status >= 400 && problem !== undefined;
    const logged = logger.isLevelEnabled("info");
    // Nothing to tell: the route is not looked up (Fastify builds `routeOptions` anew at each read).
    if (!counted && !logged) return done();
    const route = routeOf(request);
    const code = problemCodeOf(reply) ?? "";
    if (counted) problem({ method: request.method, route, status, code });
    if (!logged) return done();
    logger.info(
      {
        method: request.method,
        route,
        status,
        ...(code && { code }),
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        requestId: request.id,
        principal: principalOf(request),
      },
      "request",
    );
    done();
  });
}

function principalOf(request: FastifyRequest): string {
  const admitted = admittedRequest(request);
  if (admitted) return admitted.principal;
  return request.headers.authorization === undefined ? "anonymous" : "unadmitted";
}
