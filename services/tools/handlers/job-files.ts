import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { JobReadResultSchema } from "../../../gen/pf/tools/v1/jobs_pb.js";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { BlobMissingError, BlobUnavailableError } from "../../kit/blobs/store.js";
import { problem } from "../../kit/handler/problem.js";
import type { ToolsContext } from "../context.js";
import { resultFile } from "../db/job-files.js";
import { jobById, jobView, ownJob } from "../db/jobs.js";
import { answerBytes } from "../../kit/blobs/labels.js";
import { jobNotSucceeded, resultExpired } from "../domain/jobs/problems.js";
import { callerKeyOf } from "../domain/run/caller.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "readJobFile">;

/** A succeeded job's result files as bytes. */
export function jobFileHandlers(ctx: ToolsContext): Handlers {
  return {
    /**
     * Result file n as bytes, streamed from the blob store: its media type, an ETag from its digest (304 for
     * If-None-Match), one Range (206, or 416), revalidated on each use (the job's owner only: never cached by
     * others, and a result that expired is 410 rather than a stale copy). Only the files the job's success wrote
     * exist, so nothing an attempt left part way is ever served.
     */
    async *readJobFile(request, call) {
      const em = ctx.orm.em.fork();
      const job = await ownJob(em, request.id, callerKeyOf(ctx, call));
      if (job.state !== "succeeded") throw jobNotSucceeded(job.id, job.state);
      if (job.expiredAt) throw resultExpired(job.id);
      const file = await resultFile(em, job.id, request.n);
      if (!file)
        throw problem(404, "tools.file.not_found", `Job ${job.id} has no result file ${request.n}.`, { n: request.n });
      if (file.blobKey === "") throw resultExpired(job.id);
      const size = Number(file.size);
      const first = { job: await jobView(em, job) };
      // The job's owner only: never kept by shared caches, and a result that expired is 410 rather than a stale copy.
      const answered = answerBytes(
        call,
        {
          sha256: file.sha256,
          name: file.name,
          contentType: file.contentType,
          size,
          cacheControl: "private, no-cache",
        },
        () => problem(416, "tools.range_unsatisfiable", `The range is outside the file's ${size} bytes.`, { size }),
      );
      if (answered === undefined) {
        yield create(JobReadResultSchema, { ...first, body: { contentType: file.contentType } });
        return;
      }
      const part = answered === "whole" ? undefined : answered;
      const bytes = await ctx.blobs.get(file.blobKey, part).catch(async (error: unknown) => {
        // The sweep marks a result expired before it deletes its blobs: gone since it was read, it expired.
        if (error instanceof BlobMissingError && (await jobById(ctx.orm.em.fork(), job.id))?.expiredAt)
          throw resultExpired(job.id);
        if (!(error instanceof BlobMissingError || error instanceof BlobUnavailableError)) throw error;
        ctx.logger.error({ err: error, key: file.blobKey }, "a result file's bytes cannot be read");
        throw problem(503, "tools.store_unavailable", "The file's bytes cannot be read now; try again later.");
      });
      try {
        let head = true;
        for await (const data of bytes as AsyncIterable<Buffer>) {
          yield create(
            JobReadResultSchema,
            head ? { ...first, body: { contentType: file.contentType, data } } : { body: { data } },
          );
          head = false;
        }
        if (head) yield create(JobReadResultSchema, { ...first, body: { contentType: file.contentType } });
      } finally {
        bytes.destroy();
      }
    },
  };
}
