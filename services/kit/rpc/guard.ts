import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../logger.js";
import { isDatabaseUnavailable } from "../db/unavailable.js";
import { problem } from "../problem.js";

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
        return await next(req);
      } catch (error) {
        if (error instanceof ConnectError) throw error;
        // The transaction's statement timeout, set to the call's deadline.
        if ((error as { code?: unknown }).code === "57014") throw new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
        if (isDatabaseUnavailable(error)) {
          this.logger.warn({ err: error, rpc: req.method.name }, "database unreachable");
          throw problem(503, "dependency.unavailable", "The database is unreachable; try again shortly.");
        }
        this.logger.error({ err: error, rpc: req.method.name }, "unhandled error in handler");
        throw problem(500, "internal", "The server failed to answer; the failure was logged.");
      } finally {
        if (--this.serving === 0) for (const resolve of this.idle) resolve();
      }
    };
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
