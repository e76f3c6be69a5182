import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../kit/auth/principal.js";
import { problem } from "../kit/handler/problem.js";
import type { RunContext } from "./context.js";
import { jobNotFound, readJob, type JobView } from "./db/jobs.js";

/** The access rule name of run.job.admin, which opens every project's jobs (the read and cancel routes' alternative). */
export const ADMIN = "admin";

/** "The job belongs to the token's project": the caller's project_id claim, else 403 run.project_required. */
export function callerProject(call: HandlerContext): string {
  const project = callerOf(call).principal.projectId;
  if (!project)
    throw problem(403, "run.project_required", "Jobs belong to a project: this token carries no project_id.");
  return project;
}

/**
 * A job the caller may see: any job for run.job.admin, else one of the token's project; another project's job
 * answers 404 as a missing one does.
 */
export async function visibleJob(ctx: RunContext, call: HandlerContext, id: string): Promise<JobView> {
  const project = callerOf(call).admittedBy === ADMIN ? undefined : callerProject(call);
  const job = await readJob(ctx, id);
  if (!job || (project !== undefined && job.projectId !== project)) throw jobNotFound();
  return job;
}
