import { pino, type Logger } from "pino";
import { currentRequestId } from "../rpc/call.js";

export type { Logger };

/** Structured logs; a line written while serving a call carries its request id. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    mixin: () => {
      const requestId = currentRequestId();
      return requestId ? { requestId } : {};
    },
  });
}
