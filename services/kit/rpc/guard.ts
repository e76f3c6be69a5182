import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../runtime/logger.js";
import { isDatabaseUnavailable } from "../db/unavailable.js";
import { problem } from "../handler/problem.js";

/**
 * The outer interceptor of every pf service call. It counts the calls being
 * served, so a stopping host lets them finish before it closes the database
 * under them, and answers an error that is not a problem as a bare 500, logged
 * (with the request id, by the logger), never with internals — or as 503
 * dependency.unavailable when the database could not be reached.
 */
export class CallGuard {
  private serving = 0;
  private readonly idle = new Set<() => void>();

  constructor(private readonly logger: Logger) {}

  interceptor(): Interceptor {
    return (next) => async (req) => {
      this.serving++;
      try {
        const res = await next(req);
        // A stream can fail after its first message, past this try: its failures are answered alike.
        return res.stream ? { ...res, message: this.guarded(res.message, req.method.name) } : res;
      } catch (error) {
        throw this.answerOf(error, req.method.name);
      } finally {
        if (--this.serving === 0) for (const resolve of this.idle) resolve();
      }
    };
  }

  private async *guarded<T>(messages: AsyncIterable<T>, rpc: string): AsyncIterable<T> {
    try {
      yield* messages;
    } catch (error) {
      throw this.answerOf(error, rpc);
    }
  }

  /** What a failure is answered as: problems as they are, anything else as a problem of its own. */
  private answerOf(error: unknown, rpc: string): ConnectError {
    if (error instanceof ConnectError) return error;
    // The transaction's statement timeout, set to the call's deadline.
    if ((error as { code?: unknown }).code === "57014")
      return new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
    if (isDatabaseUnavailable(error)) {
      this.logger.warn({ err: error, rpc }, "database unreachable");
      return problem(503, "dependency.unavailable", "The database is unreachable; try again shortly.");
    }
    this.logger.error({ err: error, rpc }, "unhandled error in handler");
    return problem(500, "internal", "The server failed to answer; the failure was logged.");
  }

  /** Resolves once no call is being served, or after `limitMs`. */
  drained(limitMs: number): Promise<void> {
    if (this.serving === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.idle.delete(done);
        resolve();
      };
      const timer = setTimeout(done, limitMs);
      this.idle.add(done);
    });
  }
}
