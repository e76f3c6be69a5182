import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { DispatchState, JobFrameSchema, type DispatchedJob } from "../../gen/pf/bot/v1/jobs_pb.js";
import { ProblemSchema, type Problem } from "../../gen/pf/v1/problem_pb.js";
import { notAnswered } from "../kit/runtime/call.js";
import type { RunContext } from "./context.js";
import type { JobRow } from "./db/entities.js";
import { changeJob, lockedJob, requireBotCancel } from "./db/jobs.js";
import { dispatchRetried } from "./domain/jobs.js";
import { deviceEnded, ended, exitOfRun, metered, placed } from "./lifecycle.js";

/**
 * Run's calls to bot (dispatch, cancel, read of a dispatched job), each outside any transaction, then what bot
 * answered written in a short one on the job's lock. Only bot's own problem is an answer: bot not answering (down,
 * a 5xx, a deadline, run's own token refused) changes nothing, and the leased job that called tries again later:
 * a job is never ended for an answer bot did not give.
 */

/** Bot's own problem in a failed call, or undefined when bot did not answer. */
function refusalOf(error: unknown): Problem | undefined {
  if (!(error instanceof ConnectError) || notAnswered(error)) return undefined;
  return error.findDetails(ProblemSchema)[0];
}

const date = (at: Timestamp | undefined) => (at ? timestampDate(at) : undefined);

/**
 * Dispatches a claimed job (idempotent by its id at bot, so a try cut off by a crash is safe to make again): bot's
 * acceptance places it; a class no device advertises now, or a latched e-stop, leaves it queued until its ttl has
 * passed since it was submitted (then `unplaceable`); any other refusal ends it `refused` with bot's code. A job
 * cancelled while its dispatch was on its way is cancelled at bot too.
 */
export async function dispatch(ctx: RunContext, job: JobRow): Promise<void> {
  let answer: DispatchedJob | undefined;
  try {
    const frame = fromJson(JobFrameSchema, job.frame as JsonObject);
    ({ job: answer } = await ctx.bot.dispatchJob({
      id: job.id,
      job: frame,
      projectId: job.projectId,
      subject: job.subject,
      provider: "run",
    }));
  } catch (error) {
    const refusal = refusalOf(error);
    if (!refusal) {
      ctx.logger.warn({ err: error, job: job.id }, "bot did not answer a dispatch; the job stays queued");
      return;
    }
    await refused(ctx, job, refusal);
    return;
  }
  await ctx.transaction(async (em) => {
    const row = await lockedJob(em, job.id);
    if (!row) return;
    // Cancelled here while the dispatch was on its way: the device must hear of it (it never starts).
    if (row.state === "ended" && !row.usageFinal && !row.botCancelPending) requireBotCancel(em, row, ctx.clock.now());
    else await placed(em, row, { nodeId: answer?.nodeId ?? "", robotId: answer?.robotId ?? "" }, ctx.clock.now());
  });
}

/**
 * Bot refused a dispatch, so it holds none: queued again while the refusal may pass later and the job's ttl has not
 * passed, else ended.
 */
async function refused(ctx: RunContext, job: JobRow, refusal: Problem): Promise<void> {
  await ctx.transaction(async (em) => {
    const row = await lockedJob(em, job.id);
    if (!row || row.state !== "queued") return;
    const at = ctx.clock.now();
    const ttlMs = Number(fromJson(JobFrameSchema, row.frame as JsonObject).ttlMs);
    const said = `${refusal.code}: ${refusal.detail}`;
    if (!dispatchRetried(refusal.code)) {
      await ended(em, row, exitOfRun("refused", said, refusal.code), at, 0);
    } else if (at.getTime() >= row.submittedAt.getTime() + ttlMs) {
      const detail = `No device could take it within its ttl (${said}).`;
      await ended(em, row, exitOfRun("unplaceable", detail, refusal.code), at, 0);
    } else changeJob(em, row, { offered: false });
  });
}

/**
 * Tells bot of a cancel (the device gets job_cancel, even for a frame still in flight). Bot's account of a job it
 * ended at once (its frame never left bot) ends it here too; a dispatch bot never held leaves nothing to bill.
 */
export async function cancelAtBot(ctx: RunContext, jobId: string): Promise<void> {
  let answer: DispatchedJob | undefined;
  try {
    ({ job: answer } = await ctx.bot.cancelJob({ id: jobId }));
  } catch (error) {
    const refusal = refusalOf(error);
    if (!refusal) {
      ctx.logger.warn({ err: error, job: jobId }, "bot did not answer a cancel; it is told again");
      return;
    }
    await ctx.transaction(async (em) => {
      const row = await lockedJob(em, jobId);
      if (!row) return;
      changeJob(em, row, { botCancelPending: false });
      // Bot holds no such dispatch: nothing ran, nothing to bill.
      if (refusal.status === 404) {
        await ended(em, row, exitOfRun("canceled", "Canceled before any device had it."), ctx.clock.now(), 0);
      } else ctx.logger.error({ job: jobId, code: refusal.code, detail: refusal.detail }, "bot refused a cancel");
    });
    return;
  }
  await ctx.transaction(async (em) => {
    const row = await lockedJob(em, jobId);
    if (!row) return;
    changeJob(em, row, { botCancelPending: false });
    if (answer?.state === DispatchState.ENDED) await endedAtBot(em, row, answer, ctx.clock.now());
  });
}

/**
 * Asks bot about a job past its ttl whose device never reported its end: bot's end, when it has one, ends the job;
 * otherwise the job ends `lost` (billed nothing) and bot is told to cancel it, should its device come back.
 */
export async function reap(ctx: RunContext, jobId: string): Promise<void> {
  let answer: DispatchedJob | undefined;
  try {
    ({ job: answer } = await ctx.bot.getJob({ id: jobId }));
  } catch (error) {
    if (!refusalOf(error)) {
      ctx.logger.warn({ err: error, job: jobId }, "bot did not answer about a job past its ttl; asked again later");
      return;
    }
  }
  await ctx.transaction(async (em) => {
    const row = await lockedJob(em, jobId);
    if (!row || row.usageFinal) return;
    const at = ctx.clock.now();
    if (answer?.state === DispatchState.ENDED) return endedAtBot(em, row, answer, at);
    await ended(em, row, exitOfRun("lost", "Its device reported no end within the job's ttl."), at);
    await metered(em, row, 0, at);
    if (answer) requireBotCancel(em, row, at);
  });
}

/** Bot's account of a job's end, as the device's exit frame would have told it. */
function endedAtBot(em: Parameters<typeof ended>[0], row: JobRow, answer: DispatchedJob, at: Date) {
  return deviceEnded(em, row, {
    exit: answer.exit,
    startedAt: date(answer.startedAt),
    endedAt: date(answer.endedAt) ?? at,
  });
}
