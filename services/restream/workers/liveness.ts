import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { RestreamContext } from "../context.js";
import { openSessionsOfWorker } from "../db/sessions.js";
import { markLost, silentWorkers, workerById } from "../db/workers.js";
import { closeSession } from "../sessions.js";

/**
 * Every active worker not heard from for PF_RESTREAM_WORKER_LOST_MS is lost: its generation fenced (its heartbeats
 * answer fenced until it registers again) and the sessions it held interrupted (worker_lost), their outputs stopped,
 * with their events. One worker per transaction, checked again under its lock: a heartbeat that came meanwhile
 * keeps it.
 */
export async function sweepLostWorkers(ctx: RestreamContext): Promise<void> {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.settings.workerLostMs);
  for (const silent of await silentWorkers(ctx.orm.em.fork(), cutoff)) {
    await ctx.transaction(async (em) => {
      const worker = await workerById(em, silent.id, "update");
      if (!worker || worker.state !== "active" || worker.lastHeartbeatAt.getTime() >= cutoff.getTime()) return;
      await markLost(em, worker);
      const at = ctx.clock.now();
      for (const session of await openSessionsOfWorker(em, worker.id))
        await closeSession(ctx, em, session, { state: "interrupted", reason: "worker_lost", at, tellWorker: false });
    });
  }
}

/** The liveness sweep: one instance at a time, every PF_RESTREAM_HEARTBEAT_MS. */
export const liveness: Worker<RestreamContext> = leasedJob<RestreamContext>(
  "restream.liveness",
  (ctx) => ({ everyMs: ctx.settings.heartbeatMs }),
  sweepLostWorkers,
);
