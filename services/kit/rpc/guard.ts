import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../logger.js";
import { problem } from "../problem.js";

/**
 * Interceptor of every pf service: an error that is not a problem is logged
 * (with the request id, by the logger) and answered as a bare 500, never with internals.
 */
export function problemGuard(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      logger.error({ err: error, rpc: req.method.name }, "unhandled error in handler");
      throw problem(500, "internal", "The server failed to answer; the failure was logged.");
    }
  };
}
