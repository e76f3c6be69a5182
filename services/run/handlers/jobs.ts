import { create, toJson, toJsonString, type JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { JobFrameSchema } from "../../../gen/pf/bot/v1/jobs_pb.js";
import {
  JobCreateResultSchema,
  JobListResultSchema,
  JobReadResultSchema,
  type JobListQuery,
  type RunService,
} from "../../../gen/pf/run/v1/run_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import type { RunContext } from "../context.js";
import { dispatch } from "../dispatch.js";
import { newJob, jobToProto, lockedJob, readJobs, requireBotCancel } from "../db/jobs.js";
import type { JobRow } from "../db/entities.js";
import { FRAME_MAX_BYTES, frameFault } from "../domain/frames.js";
import { placementBackoffMs } from "../domain/jobs.js";
import { byteLength } from "../domain/stream.js";
import { ended, exitOfRun, queued } from "../lifecycle.js";
import { callerProject, visibleJob } from "../projects.js";

type JobHandlers = Pick<
  ServiceImpl<typeof RunService>,
  "submitJob" | "listJobs" | "listAllJobs" | "getJob" | "cancelJob"
>;

/** Jobs: submit, the project's and every project's lists, read and cancel. */
export function jobHandlers(ctx: RunContext): JobHandlers {
  /** A page of jobs newest first, of one project ("" every project). */
  async function listed(projectId: string, request: JobListQuery) {
    const limit = pageLimit(request.limit);
    const before = decodeTextCursor(request.cursor, 1)?.[0] ?? "";
    const rows = await readJobs(ctx, { projectId, state: request.state, before }, limit + 1);
    const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
    return create(JobListResultSchema, { jobs: items.map(jobToProto), nextCursor });
  }

  return {
    async submitJob(request, call) {
      const projectId = callerProject(call);
      const fault = frameFault(request);
      if (fault) throw invalid(fault.field, fault.detail);
      const frame = create(JobFrameSchema, {
        class: request.class,
        artifact: request.artifact,
        args: request.args,
        ttlMs: request.ttlMs,
        limits: request.limits,
        net: request.net,
        inputs: request.inputs,
      });
      if (byteLength(toJsonString(JobFrameSchema, frame)) > FRAME_MAX_BYTES)
        throw problem(
          413,
          "run.job.frame_too_large",
          "The job frame is over 1 MiB: it would not fit the device's link.",
        );
      const once = idempotencyOf(call, request, { scope: `job:${projectId}` });
      let submitted: JobRow | undefined;
      const answer = await ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          // Claimed for its first try, made from here once this commits (first-tries.ts).
          const job = newJob(em, {
            id: newId("job", at.getTime()),
            projectId,
            submittedBy: callerOf(call).principal.sub,
            subject: callerOf(call).person ?? "",
            state: "queued",
            frame: toJson(JobFrameSchema, frame, { useProtoFieldName: true }) as JsonObject,
            submittedAt: at,
            attempts: 1,
            offered: true,
            nextAttemptAt: new Date(at.getTime() + placementBackoffMs(1, ctx.settings.placementBackoffMaxMs)),
          });
          await queued(em, job, at);
          submitted = job;
          return create(JobCreateResultSchema, { job: jobToProto(job) });
        }),
      );
      // Not a retry answered from its first submit: dispatched now, without waiting for placement's pass.
      const job = submitted as JobRow | undefined;
      if (job) ctx.firstTries.start(job.id, () => dispatch(ctx, job));
      return answer;
    },

    async listJobs(request, call) {
      if (request.projectId !== "")
        throw problem(403, "run.job.project_id_admin_only", "project_id is for admins (run.job.admin) only.");
      return listed(callerProject(call), request);
    },

    listAllJobs(request) {
      return listed(request.projectId, request);
    },

    async getJob(request, call) {
      return create(JobReadResultSchema, { job: jobToProto(await visibleJob(ctx, call, request.id)) });
    },

    async cancelJob(request, call) {
      await visibleJob(ctx, call, request.id);
      return ctx.transaction(async (em) => {
        const job = (await lockedJob(em, request.id))!;
        const at = ctx.clock.now();
        // A job bot holds no dispatch of ends with nothing to bill; one that may be on its way to a device (a
        // dispatch tried and not refused, or placed) ends here at once and bot is told, so the device never starts it.
        if (job.state === "queued" && !job.offered)
          await ended(em, job, exitOfRun("canceled", "Canceled before it was placed."), at, 0);
        else if (job.state === "queued" || job.state === "placed") {
          await ended(em, job, exitOfRun("canceled", "Canceled before it started."), at);
          requireBotCancel(em, job, at);
        } else if (job.state === "running" && !job.cancelRequestedAt) requireBotCancel(em, job, at);
        return create(JobReadResultSchema, { job: jobToProto(job) });
      });
    },
  };
}
