import { problem } from "../../../kit/handler/problem.js";

/** 404 tools.job.not_found: no such job, or another caller's (which must not be told apart). */
export function jobNotFound(id: string) {
  return problem(404, "tools.job.not_found", `No job ${id} of yours.`, { id });
}

/** 409 tools.job_not_failed: only a failed job is retried. */
export function jobNotFailed(id: string, state: string) {
  return problem(409, "tools.job_not_failed", `Job ${id} is ${state}: only a failed job is retried.`, { state });
}

/** 409 tools.job_not_succeeded: a job's result (its files, a reference to it) exists only once it succeeded. */
export function jobNotSucceeded(id: string, state: string) {
  return problem(409, "tools.job_not_succeeded", `Job ${id} is ${state}: it has no result.`, { state });
}

/** 410 tools.result_expired: the job's files are gone (a result past its expiry, a failed job's inputs past theirs). */
export function resultExpired(id: string) {
  return problem(410, "tools.result_expired", `Job ${id}'s files have expired.`, { id });
}
