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
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  return socketAttempt<{ state: PortState; ms: number | null }, Socket>(
    () => connect({ host: address, port }),
    timeoutMs,
    signal,
    () => ({ state: "filtered", ms: null }),
    (socket, done) => {
      socket.once("connect", () => done.answer({ state: "open", ms: elapsed() }));
      socket.once("error", (error: NodeJS.ErrnoException) => {
        if (error.code === "ECONNREFUSED" || error.code === "ECONNRESET")
          done.answer({ state: "closed", ms: elapsed() });
        else if (FILTERED.has(error.code ?? "")) done.answer({ state: "filtered", ms: null });
        else
          done.fail(
            new ToolFailure(
              "tools.probe.failed",
              `The connection could not be tried (${error.code ?? error.message}).`,
            ),
          );
      });
    },
  );
}

/** How a socket attempt ends: with an answer, or failed. Either closes the socket and ends the wait. */
export interface AttemptEnd<T> {
  answer(value: T): void;
  fail(error: Error): void;
}

/**
 * One socket opened by `open` and given `timeoutMs` (then `timedOut` is the answer, or the failure) within the run's
 * budget (`signal`: tools.probe.timeout); `wire` listens for its outcome and ends it. However it ends, the timer and
 * the abort listener go and the socket is destroyed, its late errors ignored.
 */
export function socketAttempt<T, S extends Socket>(
  open: () => S,
  timeoutMs: number,
  signal: AbortSignal,
  timedOut: () => T | Error,
  wire: (socket: S, end: AttemptEnd<T>) => void,
): Promise<T> {
  if (signal.aborted) return Promise.reject(budgetSpent());
  return new Promise((resolve, reject) => {
    const socket = open();
    const settle = (answer: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", aborted);
      socket
        .removeAllListeners()
        .on("error", () => undefined)
        .destroy();
      answer();
    };
    const end: AttemptEnd<T> = {
      answer: (value) => settle(() => resolve(value)),
      fail: (error) => settle(() => reject(error)),
    };
    const timer = setTimeout(() => {
      const late = timedOut();
      if (late instanceof Error) end.fail(late);
      else end.answer(late);
    }, timeoutMs);
    const aborted = () => end.fail(budgetSpent());
    signal.addEventListener("abort", aborted, { once: true });
    wire(socket, end);
  });
}

/** The run's time ran out (its budget, or the caller went away). */
export function budgetSpent(): ToolFailure {
  return new ToolFailure("tools.probe.timeout", "The probe ran out of time.");
}
