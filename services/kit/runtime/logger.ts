import { pino, type DestinationStream, type Logger } from "pino";
import { currentRequestId } from "./call.js";
import { activeTraceIds } from "./tracing.js";

export type { Logger };

/**
 * Structured logs; a line written while serving a call carries its request id,
 * and one written in a span (tracing on) its `trace_id` and `span_id`.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: undefined,
    mixin: () => {
      const requestId = currentRequestId();
      const ids = activeTraceIds();
      if (ids) return requestId ? { requestId, ...ids } : ids;
      return requestId ? { requestId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
