import { expireReservations } from "../../kit/quotas/quotas.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { AiContext } from "../context.js";
import { removeExpiredEntries } from "../db/cache.js";
import { everyCounter } from "../db/quotas.js";
import { removeRequestLogs } from "../db/request-logs.js";

/** Rows removed per statement: a long backlog goes in batches, never one long statement. */
const BATCH = 1_000;
const DAY_MS = 86_400_000;

/**
 * The sweep: cache entries past their TTL, request logs older than PF_AI_REQUEST_LOG_DAYS, and quota reservations
 * a lost process left (untouched for an hour: far above any call), whose units return to their windows.
 */
export async function sweepAi(ctx: AiContext): Promise<void> {
  const at = ctx.clock.now();
  const em = ctx.orm.em.fork();
  while ((await removeExpiredEntries(em, at, BATCH)) === BATCH);
  const before = new Date(at.getTime() - ctx.settings.requestLogDays * DAY_MS);
  while ((await removeRequestLogs(em, before, BATCH)) === BATCH);
  const counters = await everyCounter(em);
  if (counters.length > 0) await expireReservations(ctx, counters);
}

/** The sweep as a background job: one instance at a time, every PF_AI_SWEEP_EVERY_MS (the first pass too). */
export const sweep: Worker<AiContext> = leasedJob<AiContext>(
  "ai.sweep",
  (ctx) => ({ everyMs: ctx.settings.sweepEveryMs, firstAfterMs: Math.min(ctx.settings.sweepEveryMs, 60_000) }),
  sweepAi,
);
