import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { SourcesContext } from "../context.js";
import { queueDue } from "../db/runs.js";
import { newlyStale, sourceToProto } from "../db/sources.js";
import { STALE_INTERVALS } from "../domain/sources.js";
import { sourceChanged } from "../events.js";

const BATCH = 100;

/** Queues a scheduled run for each enabled fetched source due by its interval; answers how many. */
export const scheduleDue = (ctx: SourcesContext): Promise<number> =>
  ctx.transaction((em) => queueDue(em, ctx.clock.now(), BATCH));

/**
 * Tells sources.source.changed (`stale`) once for each enabled fetched source whose last success passed three
 * intervals (a success later makes it fresh, and a next crossing told again). Staleness itself is computed on read.
 */
export const reportStale = (ctx: SourcesContext): Promise<number> =>
  ctx.transaction(async (em) => {
    const at = ctx.clock.now();
    const stale = await newlyStale(em, at, STALE_INTERVALS, BATCH);
    for (const row of stale) await sourceChanged(em, sourceToProto(row, at), "stale");
    return stale.length;
  });

/** The scheduler as a background job: one instance at a time, every PF_SOURCES_SCHEDULE_EVERY_MS. */
export const scheduler: Worker<SourcesContext> = leasedJob<SourcesContext>(
  "sources.schedule",
  (ctx) => ({ everyMs: ctx.settings.scheduleEveryMs, firstAfterMs: 1_000 }),
  async (ctx) => {
    while ((await scheduleDue(ctx)) === BATCH);
    while ((await reportStale(ctx)) === BATCH);
  },
);
