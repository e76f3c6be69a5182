import { ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../logger.js";
import { problem } from "../problem.js";

/**
 * Outermost interceptor of every pf service: an error that is not a problem is
 * logged with the request id and answered as a bare 500, never with internals.
 */
export function problemGuard(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      logger.error({ err: error, rpc: req.method.name, requestId: req.header.get("x-request-id") }, "unhandled error in handler");
      throw problem(500, "internal", "The server failed to answer; the failure was logged.");
    }
  };
}
