import type { Job } from "../../../../gen/pf/tools/v1/jobs_pb.js";
import type { ToolsContext } from "../../context.js";
import { jobById, jobView } from "../../db/jobs.js";
import { jobNotFound } from "./problems.js";
import { awaitEnd } from "../../../kit/runtime/wakes.js";
import { hasEnded } from "./states.js";

/**
 * How often a waiter reads its job again without being told: what an executor of another instance changed reaches
 * it no later than this (this instance's own changes wake it at once).
 */
export const RECHECK_MS = 1_000;

/**
 * The job once it has ended, or as it stands when `ms` have passed or `signal` aborted (the run route waits for
 * its job this way within wait_ms). 404 tools.job.not_found for no such job.
 */
export async function awaitJob(ctx: ToolsContext, id: string, ms: number, signal?: AbortSignal): Promise<Job> {
  const em = ctx.orm.em.fork();
  const read = async () => {
    const row = await jobById(em.fork(), id);
    if (!row) throw jobNotFound(id);
    return row;
  };
  const row = await awaitEnd(
    ctx.news,
    { key: id, read, ended: (job) => hasEnded(job.state), recheckMs: RECHECK_MS },
    ms,
    signal,
  );
  return jobView(em, row);
}
