import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { STATUS_CODES } from "node:http";
import type { Problem } from "../gen/pf/v1/problem_pb.js";
import type { Logger } from "../services/kit/runtime/logger.js";
import { problemMessage, problemOf } from "../services/kit/handler/problem.js";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/** The path a problem happened on, without the query (the `instance` member). */
export function instanceOf(request: FastifyRequest): string {
  const query = request.url.indexOf("?");
  return query === -1 ? request.url : request.url.slice(0, query);
}

/**
 * The errors.problem@1 body: the fixed members, then the problem's extensions
 * flattened beside them (never overriding a fixed member).
 */
export function problemJson(found: Problem, instance: string): JsonObject {
  const status = validStatus(found.status) ? found.status : 500;
  const body: JsonObject = {
    type: found.type || "about:blank",
    title: found.title || STATUS_CODES[status] || "Error",
    status,
    detail: found.detail,
    instance,
    code: found.code,
  };
  if (found.extensions) {
    for (const [name, value] of Object.entries(found.extensions)) {
      if (!(name in body)) body[name] = value;
    }
  }
  return body;
}

/** The code of the problem each answered request got (the access log and the refusal counter read it). */
const problemCodes = new WeakMap<FastifyReply, string>();

export function problemCodeOf(reply: FastifyReply): string | undefined {
  return problemCodes.get(reply);
}

export function sendProblem(reply: FastifyReply, found: Problem, instance: string): FastifyReply {
  const body = problemJson(found, instance);
  problemCodes.set(reply, found.code);
  // RFC 9110: a 401 names the scheme that would let the caller in.
  if (body.status === 401)
    reply.header("www-authenticate", found.code === "auth.invalid" ? 'Bearer error="invalid_token"' : "Bearer");
  // RFC 9110: how long to wait, in whole seconds (429 rate.limited, or any problem that knows).
  const retryAfter = found.extensions?.retry_after_seconds;
  if (typeof retryAfter === "number" && retryAfter >= 0) reply.header("retry-after", String(Math.ceil(retryAfter)));
  // RFC 9110 §15.5.17: a 416 names the length of what the range missed (a problem with `size` knows it).
  const size = found.extensions?.size;
  if (body.status === 416 && typeof size === "number") reply.header("content-range", `bytes */${size}`);
  return reply
    .code(body.status as number)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(body));
}

/** Answers a failed call with its problem; 5xx are logged with the request id, since their body says nothing. */
export function sendFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  logger: Logger,
): FastifyReply {
  const found = problemOf(error);
  if (!(found.status >= 400 && found.status < 500)) {
    // A ConnectError's details carry whole descriptors: log what it says, not what it holds.
    const err = error instanceof ConnectError ? { code: Code[error.code], message: error.rawMessage } : error;
    // The path without the query: a query may carry a secret (an overlay stream's token).
    logger.error(
      { err, requestId: request.id, method: request.method, path: instanceOf(request) },
      "gateway request failed",
    );
  }
  return sendProblem(reply, found, instanceOf(request));
}

/**
 * Fastify's own failures (body parsing, limits) as the platform's problems.
 * Anything else it reports is a 500 without internals.
 */
export function problemOfFastify(error: FastifyError, bodyLimit: number): Problem {
  // A parser's own refusal (a body too wide) is already a problem.
  if (error instanceof ConnectError) return problemOf(error);
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return problemMessage(413, "request.too_large", `The body is larger than the limit of ${bodyLimit} bytes.`);
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return problemMessage(415, "request.unsupported_media_type", "Send the body as application/json.");
    case "FST_ERR_BAD_URL":
      return problemMessage(400, "request.invalid", "The path is not a valid URL (bad percent-encoding).", {
        field: "path",
      });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return problemMessage(status, "request.invalid", error.message);
  return problemMessage(500, "internal", "The server failed to answer; the failure was logged.");
}

function validStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 400 && status <= 599;
}
