import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { STATUS_CODES } from "node:http";
import { type Problem, ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";

const CODE_BY_STATUS: Record<number, Code> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  405: Code.Unimplemented,
  409: Code.Aborted,
  410: Code.NotFound,
  412: Code.FailedPrecondition,
  413: Code.ResourceExhausted,
  415: Code.InvalidArgument,
  422: Code.InvalidArgument,
  428: Code.FailedPrecondition,
  429: Code.ResourceExhausted,
  500: Code.Internal,
  501: Code.Unimplemented,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

const STATUS_BY_CODE: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 412,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function problemType(code: string): string {
  return `urn:pf:problem:${code}`;
}

/** A problem as the message the gateway renders (errors.problem@1). */
export function problemMessage(status: number, code: string, detail: string, extensions?: JsonObject): Problem {
  return create(ProblemSchema, {
    type: problemType(code),
    title: STATUS_CODES[status] ?? "Error",
    status,
    detail,
    code,
    extensions,
  });
}

/**
 * The one way handlers fail: a ConnectError carrying a Problem with the exact
 * HTTP status, so gRPC callers get a matching code and JSON callers the problem.
 */
export function problem(status: number, code: string, detail: string, extensions?: JsonObject): ConnectError {
  return new ConnectError(detail, CODE_BY_STATUS[status] ?? Code.Unknown, undefined, [
    { desc: ProblemSchema, value: problemMessage(status, code, detail, extensions) },
  ]);
}

/** The problem an error stands for; errors without one become a problem by their code, 500s without internals. */
export function problemOf(error: unknown): Problem {
  const connectError = ConnectError.from(error);
  const [found] = connectError.findDetails(ProblemSchema);
  if (found) return found;
  const status = STATUS_BY_CODE[connectError.code] ?? 500;
  if (status >= 500 && connectError.code !== Code.Unavailable && connectError.code !== Code.DeadlineExceeded) {
    return problemMessage(500, "internal", "The server failed to answer; the failure was logged.");
  }
  return problemMessage(status, codeName(connectError.code), connectError.rawMessage);
}

/** A Connect code as the protocol writes it: `not_found`, `deadline_exceeded` (`ok` for 0). */
export function codeName(code: Code): string {
  if (!code) return "ok";
  return Code[code].replace(/[A-Z]/g, (c, i: number) => (i === 0 ? c.toLowerCase() : `_${c.toLowerCase()}`));
}

/**
 * 400 request.invalid naming the field at fault: a check only the service can make (across fields, on data, after
 * normalising). Its one fault is listed in `errors` as the input guard lists declared rules' (rule `service`), so a
 * client reads every request.invalid the same way.
 */
export function invalid(field: string, detail: string): ConnectError {
  return problem(400, "request.invalid", detail, { field, errors: [{ field, rule: "service", message: detail }] });
}
