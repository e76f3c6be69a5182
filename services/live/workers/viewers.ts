import type { Worker } from "../../kit/service/module.js";
import type { LiveContext } from "../context.js";
import { recordViewers } from "../db/stats.js";

/**
 * The viewers this instance saw, written every PF_LIVE_VIEWERS_FLUSH_MS as one statement (on every instance, not
 * leased: each flushes its own memory), so no read writes to the database. Stopping flushes what is left.
 */
export const viewerFlush: Worker<LiveContext> = async (ctx) => {
  let running: Promise<void> | undefined;
  const flush = () => {
    const marks = ctx.viewers.drain();
    if (marks.length === 0) return Promise.resolve();
    return ctx
      .transaction((em) => recordViewers(em, marks))
      .catch((error: unknown) => ctx.logger.warn({ err: error, marks: marks.length }, "viewers not recorded"));
  };
  const timer = setInterval(() => {
    if (!running) running = flush().finally(() => (running = undefined));
  }, ctx.settings.viewersFlushMs);
  return async () => {
    clearInterval(timer);
    await running;
    await flush();
  };
};
