import { connect, type Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { ToolFailure } from "../../families/tool.js";

/** How a TCP port answered: open (connected), closed (refused) or filtered (no answer in time, or unreachable). */
export type PortState = "open" | "closed" | "filtered";

/** Errors meaning nothing answered for the port: a firewall dropping it, no route to it. */
const FILTERED = new Set(["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ETIMEDOUT"]);

/**
 * One TCP connect to `address` (an IP address: no lookup happens) and `port`, closed again at once: its state and,
 * open or closed, how long the answer took in ms (0.01 ms). Nothing is sent. A fault that says nothing of the port
 * (this host cannot reach that address family) fails the run; so does `signal` (the run's budget).
 */
export function connectOnce(
  address: string,
  port: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ state: PortState; ms: number | null }> {
  if (signal.aborted) return Promise.reject(budgetSpent());
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
    const socket: Socket = connect({ host: address, port });
    const timer = setTimeout(() => settle(() => resolve({ state: "filtered", ms: null })), timeoutMs);
    const aborted = () => settle(() => reject(budgetSpent()));
    signal.addEventListener("abort", aborted, { once: true });
    const settle = (answer: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      socket
        .removeAllListeners()
        .on("error", () => undefined)
        .destroy();
      answer();
    };
    socket.once("connect", () => {
      const ms = elapsed();
      settle(() => resolve({ state: "open", ms }));
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      const ms = elapsed();
      if (error.code === "ECONNREFUSED" || error.code === "ECONNRESET") settle(() => resolve({ state: "closed", ms }));
      else if (FILTERED.has(error.code ?? "")) settle(() => resolve({ state: "filtered", ms: null }));
      else
        settle(() =>
          reject(
            new ToolFailure(
              "tools.probe.failed",
              `The connection could not be tried (${error.code ?? error.message}).`,
            ),
          ),
        );
    });
  });
}

/** The run's time ran out (its budget, or the caller went away). */
export function budgetSpent(): ToolFailure {
  return new ToolFailure("tools.probe.timeout", "The probe ran out of time.");
}
