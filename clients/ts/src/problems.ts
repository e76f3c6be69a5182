import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { type Problem, ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";

/**
 * A refusal of the platform: the ConnectError it arrived as, with the problem it carries (errors.problem@1, the
 * same RFC 9457 problem the JSON routes answer): `problem.code` (`auth.header_refused`), `problem.status` (403),
 * `problem.detail`, and `problem.extensions` (the field at fault, `retry_after_seconds`, …).
 */
export class PlatformError extends ConnectError {
  readonly problem: Problem;

  constructor(error: ConnectError, problem: Problem) {
    super(error.rawMessage, error.code, error.metadata, undefined, error.cause);
    this.details = error.details;
    this.problem = problem;
  }

  // ConnectError's own check answers true for any ConnectError: this one asks for a PlatformError.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && Object.prototype.isPrototypeOf.call(this.prototype, value);
  }
}

/** The problem a ConnectError carries, if any. */
export function problemOf(error: ConnectError): Problem | undefined {
  return error instanceof PlatformError ? error.problem : error.findDetails(ProblemSchema)[0];
}

/** The HTTP status of a failed call: its problem's, else the one its code stands for when a retry may help. */
export function statusOf(error: ConnectError): number | undefined {
  const problem = problemOf(error);
  if (problem) return problem.status;
  return error.code === Code.Unavailable ? 503 : error.code === Code.ResourceExhausted ? 429 : undefined;
}

/** A ConnectError carrying a problem, as a PlatformError; anything else as it is. */
function withProblem(error: unknown): unknown {
  if (!(error instanceof ConnectError) || error instanceof PlatformError) return error;
  const [problem] = error.findDetails(ProblemSchema);
  return problem ? new PlatformError(error, problem) : error;
}

/** Turns refusals into PlatformErrors, those of a unary call and those ending a stream. */
export function problems(): Interceptor {
  return (next) => async (req) => {
    let response;
    try {
      response = await next(req);
    } catch (error) {
      throw withProblem(error);
    }
    return response.stream ? { ...response, message: rethrowing(response.message) } : response;
  };
}

async function* rethrowing<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (error) {
    throw withProblem(error);
  }
}
