import { pino, type DestinationStream, type Logger } from "pino";
import { currentRequestId } from "./call.js";
import { activeTraceIds, processName } from "./tracing.js";

export type { Logger };

/** What names a process in its log lines and on its metrics: its name (`OTEL_SERVICE_NAME`) and its `PF_SERVICES`. */
export interface ProcessLabels {
  process: string;
  /** PF_SERVICES as given (`tips,vip`); `all` when unset. */
  services: string;
}

export function processLabels(services: readonly string[] | undefined): ProcessLabels {
  return { process: processName(), services: services?.join(",") ?? "all" };
}

/**
 * Structured logs; a line written while serving a call carries its request id,
 * and one written in a span (tracing on) its `trace_id` and `span_id`. With
 * `labels`, every line names its process (a split run's lines tell apart).
 */
export function createLogger(level: string, destination?: DestinationStream, labels?: ProcessLabels): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: labels ?? undefined,
    mixin: () => {
      const requestId = currentRequestId();
      const ids = activeTraceIds();
      if (ids) return requestId ? { requestId, ...ids } : ids;
      return requestId ? { requestId } : {};
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
