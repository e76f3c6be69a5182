import type { AiContext } from "../context.js";
import { renewRunLease } from "../db/runs.js";

/**
 * Holds a running run while this instance executes it: its lease is renewed every third of PF_AI_LEASE_MS; a
 * renewal finding it no longer running (canceled on another instance, or reaped) aborts its call. Answers how to
 * let go.
 */
export function holdRun(ctx: AiContext, id: string, controller: AbortController): () => void {
  const { leaseMs } = ctx.settings;
  const timer = setInterval(() => {
    const until = new Date(ctx.clock.now().getTime() + leaseMs);
    renewRunLease(ctx.orm.em.fork(), id, until)
      .then((held) => {
        if (!held) controller.abort();
      })
      .catch((error: unknown) => ctx.logger.warn({ err: error, run: id }, "a run's lease was not renewed"));
  }, leaseMs / 3);
  return () => clearInterval(timer);
}

/** Waits `ms`, or less when the run is canceled meanwhile (answers false then). */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
