import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import { JobReadResultSchema, type Job, type JobCreateRequest } from "../../../gen/pf/tools/v1/jobs_pb.js";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { StreamSlots } from "../../kit/rpc/stream-slots.js";
import { idempotencyKeyOf } from "../../kit/writes/idempotency.js";
import type { ToolsContext } from "../context.js";
import { endJob } from "../db/job-runs.js";
import { handOverInputs } from "../db/job-files.js";
import { insertJob, jobById, jobView, ownJob, saveJob } from "../db/jobs.js";
import { letGoOfBlobs } from "../domain/jobs/blobs.js";
import { createJob, type FilePiece } from "../domain/jobs/create.js";
import { requestHashOf } from "../domain/jobs/files.js";
import { jobIdFrom } from "../domain/jobs/ids.js";
import { jobNotFailed, resultExpired } from "../domain/jobs/problems.js";
import { hasEnded } from "../domain/jobs/states.js";
import { takeQuota } from "../domain/quota.js";
import { callerKeyOf } from "../domain/run/caller.js";
import { servedTool } from "../domain/run/served.js";
import { jobEventHandlers } from "./job-events.js";
import { jobFileHandlers } from "./job-files.js";
import { referenceHandlers } from "./references.js";

type Handlers = Pick<
  ServiceImpl<typeof ToolsService>,
  "createJob" | "getJob" | "cancelJob" | "retryJob" | "watchJob" | "readJobFile" | "putReference" | "deleteReference"
>;

/** Creations whose files one owner may be uploading at once in this process (each holds a socket and a blob put). */
const CREATIONS_PER_OWNER = 4;

/** Jobs of the job tools, each owned by the caller that created it: another caller's job is its 404. */
export function jobHandlers(ctx: ToolsContext): Handlers {
  const creating = new StreamSlots();
  const news = ctx.news;
  return {
    ...jobEventHandlers(ctx),
    ...jobFileHandlers(ctx),
    ...referenceHandlers(ctx),

    /**
     * The first message names the tool, its input, the media objects to read and the idempotency key; the files
     * follow (multipart), each streamed to the blob store as it arrives. Refused before any byte is stored: an
     * unknown tool (404), an inline one or bad input (400 tools.input.invalid), a tool that does not run here (503),
     * the caller's quota spent (429).
     */
    async createJob(requests, call) {
      const messages = requests[Symbol.asyncIterator]();
      const head = await messages.next();
      if (head.done || head.value.tool === "")
        throw invalid("tool", "The first message names the job tool (tool) and its input.");
      const request = head.value;
      const tool = servedTool(ctx, request.tool);
      if (tool.execution !== "job")
        throw problem(
          400,
          "tools.input.invalid",
          `The tool ${tool.id} runs inline: run it with POST /tools/api/v1/tools/${tool.id}/run.`,
          { field: "tool" },
        );
      const input = ctx.schemas.input(tool, request.input ?? {});
      const owner = callerKeyOf(ctx, call);
      const { principal, person } = callerOf(call);
      // A service acting for nobody creates for the many it serves: not capped per caller.
      const release = creating.take(
        principal.kind === "service" && person === undefined
          ? []
          : [{ name: "tools.job.create.open", key: owner, limit: CREATIONS_PER_OWNER }],
      );
      try {
        return await createJob(ctx, owner, tool, input, piecesOf(request, messages), {
          mediaKeys: request.mediaKeys,
          idempotencyKey: idempotencyKeyOf(request.idempotencyKey, call),
        });
      } finally {
        release();
      }
    },

    async getJob(request, call) {
      const em = ctx.orm.em.fork();
      const row = await ownJob(em, request.id, callerKeyOf(ctx, call));
      return create(JobReadResultSchema, { job: await jobView(em, row) });
    },

    /**
     * A queued or running job ends canceled at once (a running job's executor sees it at once in this process, at
     * its next lease renewal elsewhere, and stops); its input files go, as no retry can use them. A job already
     * ended is answered as it is.
     */
    async cancelJob(request, call) {
      const owner = callerKeyOf(ctx, call);
      const { job, canceled } = await ctx.transaction(async (em) => {
        const row = await ownJob(em, request.id, owner, true);
        if (hasEnded(row.state)) return { job: await jobView(em, row), canceled: false };
        await endJob(em, row, { state: "canceled" }, ctx.clock.now());
        return { job: await jobView(em, row), canceled: true };
      });
      if (canceled) {
        news.tell(job.id);
        await letGoOfBlobs(ctx, job.id, "input");
      }
      return job;
    },

    /**
     * A failed job's retry: a new queued job with the same tool, input and input files (the same blobs, handed
     * over), its cost taken from the caller's quota; asking again answers that retry. 409 tools.job_not_failed for
     * a job that did not fail, 410 tools.result_expired once a failed job's files are gone.
     */
    async retryJob(request, call) {
      const owner = callerKeyOf(ctx, call);
      const earlier = await ownJob(ctx.orm.em.fork(), request.id, owner);
      if (earlier.retriedBy) return retryOf(ctx, earlier.retriedBy);
      if (earlier.state !== "failed") throw jobNotFailed(earlier.id, earlier.state);
      const tool = servedTool(ctx, earlier.tool);
      const key = idempotencyKeyOf(request.idempotencyKey, call) || null;
      const held = await takeQuota(ctx, owner, tool);
      try {
        const answer = await ctx.transaction(async (em) => {
          const row = await ownJob(em, request.id, owner, true);
          if (row.retriedBy) return { retry: row.retriedBy };
          if (row.state !== "failed") throw jobNotFailed(row.id, row.state);
          if (row.expiredAt) throw resultExpired(row.id);
          const retry = await insertJob(
            em,
            {
              id: jobIdFrom(randomBytes(16)),
              tool: row.tool,
              family: row.family,
              owner,
              input: row.input,
              idempotencyKey: key,
              requestHash: requestHashOf({ tool: row.tool, input: { retry_of: row.id }, mediaKeys: [], files: [] }),
              retryOf: row.id,
              createdAt: ctx.clock.now(),
            },
            [],
          );
          if (!retry)
            throw problem(409, "idempotency.mismatch", "This idempotency key was used with a different request.");
          await handOverInputs(em, row.id, retry.id);
          // Its input files are the retry's now: nothing of its own is left to expire.
          await saveJob(em, row, { retriedBy: retry.id, expiresAt: null });
          await held.settle(tool.cost, em);
          return { created: await jobView(em, retry) };
        });
        if (answer.created) return answer.created;
        await held.release();
        return await retryOf(ctx, answer.retry);
      } catch (error) {
        await held.release().catch((cause: unknown) => {
          ctx.logger.error({ err: cause }, "a refused retry's quota units were not given back; the sweep will");
        });
        throw error;
      }
    },
  };
}

/** The files of a creation: the first message (which may start the first file) and those after it, which carry files only. */
async function* piecesOf(head: JobCreateRequest, rest: AsyncIterator<JobCreateRequest>): AsyncGenerator<FilePiece> {
  yield head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    const { tool, input, mediaKeys, idempotencyKey } = next.value;
    const named = tool
      ? "tool"
      : input
        ? "input"
        : mediaKeys.length > 0
          ? "media_keys"
          : idempotencyKey
            ? "idempotency_key"
            : undefined;
    if (named) throw invalid(named, `Field ${named} is set on the first message only; the following carry files.`);
    yield next.value;
  }
}

async function retryOf(ctx: ToolsContext, id: string): Promise<Job> {
  const em = ctx.orm.em.fork();
  return jobView(em, (await jobById(em, id))!);
}
