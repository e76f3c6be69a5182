import { neverAborted } from "./call.js";

/**
 * `work`'s answer, or `signal`'s reason as soon as it aborts (the work may go on; the caller stops waiting for
 * it). The work's own end is always observed, so a rejection after the abort is never left unhandled.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  // The shared signal of an in-memory call without a caller's never aborts: no listener to add on it.
  if (signal === neverAborted) return work;
  return new Promise<T>((resolve, reject) => {
    const aborted = () => reject(signal.reason as Error);
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", aborted));
    if (signal.aborted) return aborted();
    signal.addEventListener("abort", aborted, { once: true });
  });
}
