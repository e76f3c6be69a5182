import { create, toJson } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException, type EntityManager } from "@mikro-orm/postgresql";
import type { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import { DispatchResultSchema, JobFrameSchema, type DispatchRequest } from "../../../gen/pf/bot/v1/jobs_pb.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { actorOf } from "../actors.js";
import type { BotContext } from "../context.js";
import { audit } from "../db/audit.js";
import { candidateDevices, capsOf, deviceById, deviceNotFound, isOnline, type Candidate } from "../db/devices.js";
import { insertJob, jobById, jobNotFound, jobToProto, saveJobs } from "../db/jobs.js";
import { robotById } from "../db/robots.js";
import { checkFrame, checkFrameSize, dispatchHash, enforcesNet, jobFrame } from "../domain/frames.js";
import { canceled, endJob } from "../endings.js";
import { dispatchEvent } from "../events.js";

const classUnadvertised = (jobClass: string, where: string) =>
  problem(409, "bot.class_unadvertised", `${where} advertises no job class ${jobClass} now.`, { class: jobClass });

const estopLatched = () =>
  problem(409, "bot.estop_latched", "The robot's e-stop is latched: no job reaches it until it is cleared.");

type JobHandlers = Pick<ServiceImpl<typeof BotService>, "dispatchJob" | "getJob" | "cancelJob">;

/**
 * Dispatch, read and cancel, for the job-run service's token only. A dispatch is accepted into the database and its
 * frame goes to the device's link at the commit (`bot.dispatch.placed`, links.ts): an offline device gets it when it
 * links again, until the backstop ends it `lost` once its ttl (and the grace) has passed (workers/lost.ts).
 */
export function jobHandlers(ctx: BotContext): JobHandlers {
  /** The device a dispatch goes to: the one named, or an online one advertising the class (fewest open jobs). */
  async function placement(
    em: EntityManager,
    request: DispatchRequest,
    at: Date,
  ): Promise<Omit<Candidate, "estopped">> {
    const frame = request.job!;
    if (request.nodeId !== "") {
      const device = await deviceById(em, request.nodeId);
      const robot = device && (await robotById(em, device.robotId));
      if (!device || device.status !== "paired" || !robot || robot.deletedAt) throw deviceNotFound();
      if (!device.classes.includes(frame.class)) throw classUnadvertised(frame.class, `Device ${device.id}`);
      if (robot.estopLatched) throw estopLatched();
      return device;
    }
    const since = new Date(at.getTime() - ctx.settings.presenceTimeoutMs);
    const candidates = await candidateDevices(em, frame.class, since);
    const open = candidates.filter((device) => !device.estopped);
    if (open.length === 0)
      throw candidates.length > 0 ? estopLatched() : classUnadvertised(frame.class, "No online device");
    // One that can enforce the job's network policy, where any can (the device refuses a policy it cannot enforce).
    return open.find((device) => enforcesNet(frame.net, capsOf(device))) ?? open[0];
  }

  return {
    async dispatchJob(request, call) {
      if (request.projectId === "")
        throw problem(422, "bot.project_required", "A dispatch carries the job's project_id (the project it bills).");
      if (!request.job) throw invalid("job", "A dispatch carries the job frame.");
      checkFrame(request.job);
      checkFrameSize(request.id, request.job, ctx.settings.mediaUrl);
      const hash = dispatchHash(request);
      const who = actorOf(call);
      const dispatched = () =>
        ctx.transaction(async (em) => {
          const existing = await jobById(em, request.id);
          if (existing) {
            if (existing.requestHash !== hash)
              throw problem(409, "idempotency.mismatch", `Job ${request.id} was dispatched with another request.`);
            return { row: existing, created: false };
          }
          const at = ctx.clock.now();
          const device = await placement(em, request, at);
          const job = insertJob(em, {
            id: request.id,
            requestHash: hash,
            nodeId: device.id,
            robotId: device.robotId,
            projectId: request.projectId,
            subject: request.subject,
            provider: request.provider,
            frame: toJson(JobFrameSchema, request.job!) as Record<string, unknown>,
            state: "dispatched",
            exit: null,
            stdout: "",
            stderr: "",
            stdoutBytes: 0,
            stderrBytes: 0,
            outputSeq: 0,
            eventSeq: 0,
            cancelRequested: false,
            dispatchedAt: at,
            receivedAt: null,
            startedAt: null,
            endedAt: null,
            lostAt: new Date(at.getTime() + Number(request.job!.ttlMs) + ctx.settings.lostGraceMs),
          });
          const detail = [request.job!.class, request.job!.artifact].filter((word) => word !== "").join(" ");
          audit(em, device.robotId, { action: "job_dispatched", ...who, target: job.id, detail }, at);
          await dispatchEvent(em, "bot.dispatch.placed", job, at);
          return { row: job, created: true };
        });
      // Two dispatches of one job id at once: the one whose insert meets the other's row (its key, once committed)
      // runs again and answers it as a retry.
      const { row, created } = await dispatched().catch((error: unknown) => {
        if (error instanceof UniqueConstraintViolationException) return dispatched();
        throw error;
      });
      if (created) ctx.links.placed(row.nodeId, row.id, jobFrame(row.id, request.job, ctx.settings.mediaUrl));
      else answerStatus(call, 200);
      return create(DispatchResultSchema, { job: jobToProto(row) });
    },

    async getJob(request) {
      const row = await jobById(ctx.orm.em.fork(), request.id);
      if (!row) throw jobNotFound();
      return create(DispatchResultSchema, { job: jobToProto(row) });
    },

    async cancelJob(request, call) {
      const who = actorOf(call);
      const row = await ctx.transaction(async (em) => {
        const job = await jobById(em, request.id, true);
        if (!job) throw jobNotFound();
        if (job.state === "ended" || job.cancelRequested) return job;
        const at = ctx.clock.now();
        job.cancelRequested = true;
        audit(em, job.robotId, { action: "job_cancel_requested", ...who, target: job.id }, at);
        const device = await deviceById(em, job.nodeId);
        const since = new Date(at.getTime() - ctx.settings.presenceTimeoutMs);
        // A frame no link holds never starts: it ends here. Otherwise the device's link sends job_cancel (a frame
        // in flight is checked before start) or ends it, and a device that links again is told in reply to its hello.
        if (job.state === "dispatched" && !(device && isOnline(device, since)))
          await endJob(em, job, canceled("canceled before it reached the device"), at);
        else await dispatchEvent(em, "bot.dispatch.cancel_requested", job, at);
        await saveJobs(em);
        return job;
      });
      return create(DispatchResultSchema, { job: jobToProto(row) });
    },
  };
}
