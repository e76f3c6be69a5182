import { create, fromJson, toJson, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { JobFrameSchema, type JobExit as BotExit } from "../../gen/pf/bot/v1/jobs_pb.js";
import { OutputStream } from "../../gen/pf/bot/v1/link_pb.js";
import {
  JobExitSchema,
  JobOutputChunkSchema,
  JobStateChangeSchema,
  JobStreamEventSchema,
  type JobExit,
  type JobStreamEvent,
} from "../../gen/pf/run/v1/jobs_pb.js";
import type { JobRow } from "./db/entities.js";
import { changeJob } from "./db/jobs.js";
import { appendStreamEvent } from "./db/stream.js";
import { exitReasonName, usageSeconds } from "./domain/jobs.js";
import { byteLength, kept } from "./domain/stream.js";
import { jobMetered, jobStreamed, streamSubjects } from "./events.js";
import type { RunSettings } from "./settings.js";
import { noteStreamed } from "./watchers.js";

/**
 * How a job moves through its states, in the caller's transaction on the locked job row: each change persists the
 * job's next stream event (its SSE id, `seq`) and records its run.job.* event beside it, so open streams on every
 * instance hear of it once it is committed. Shared by submit, cancel, placement, the reaper and the consumer of
 * bot's job events. A change that does not apply to the job's state (a device's late word on a job ended here) is
 * no change.
 */

/** Applies `changes` to the job and persists its next stream event with its run.job.* event. */
async function streamed(
  em: EntityManager,
  job: JobRow,
  changes: Partial<JobRow>,
  what: keyof typeof streamSubjects,
  event: Extract<JobStreamEvent["event"], { case: "state" | "output" }>,
  at: Date,
): Promise<void> {
  const body = (
    event.case === "output"
      ? toJson(JobOutputChunkSchema, event.value, { alwaysEmitImplicit: true })
      : toJson(JobStateChangeSchema, event.value, { alwaysEmitImplicit: true })
  ) as JsonObject;
  const seq = appendStreamEvent(em, job, changes, { at, kind: event.case, body });
  const message = create(JobStreamEventSchema, { id: String(seq), at: timestampFromDate(at), event });
  noteStreamed(em, job.id, message);
  await jobStreamed(em, job, what, message, at);
}

const stateChange = (value: MessageInitShape<typeof JobStateChangeSchema>) =>
  ({ case: "state", value: create(JobStateChangeSchema, value) }) as const;

/** The job was submitted: its first stream event. */
export function queued(em: EntityManager, job: JobRow, at: Date): Promise<void> {
  return streamed(em, job, {}, "queued", stateChange({ state: "queued" }), at);
}

/** Bot accepted the job's dispatch (or the device acknowledged it before run heard bot's answer): placed. */
export async function placed(
  em: EntityManager,
  job: JobRow,
  placement: { nodeId: string; robotId: string },
  at: Date,
): Promise<void> {
  if (job.state !== "queued") {
    // The device's acknowledgement came first, naming the device only: bot's answer names the robot too.
    if (job.robotId === "" && placement.robotId !== "") changeJob(em, job, placement);
    return;
  }
  const changes = { ...placement, state: "placed", placedAt: at, nextAttemptAt: null };
  const where = { deviceId: placement.nodeId, robotId: placement.robotId };
  await streamed(em, job, changes, "placed", stateChange({ state: "placed", placement: where }), at);
}

/** The device acknowledged the frame: its ttl counts from `at`. */
export async function received(
  em: EntityManager,
  job: JobRow,
  placement: { nodeId: string; robotId: string },
  at: Date,
): Promise<void> {
  await placed(em, job, placement, at);
  if (!job.receivedAt) changeJob(em, job, { receivedAt: at });
}

/** The device started the process at `at` (its clock): running, unless the job ended here meanwhile. */
export async function started(em: EntityManager, job: JobRow, at: Date): Promise<void> {
  const startedAt = job.startedAt ?? at;
  if (job.state !== "queued" && job.state !== "placed") {
    if (!job.startedAt) changeJob(em, job, { startedAt });
    return;
  }
  const changes = { startedAt, state: "running", nextAttemptAt: null };
  await streamed(em, job, changes, "running", stateChange({ state: "running" }), at);
}

/**
 * A chunk of the job's output: kept in its result (the first `resultMaxBytes` of each stream) and its stream (the
 * first `streamMaxBytes` of all output; the chunk reaching the bound is cut and marked, later ones dropped). Output
 * of a job ended here (a device that had not yet heard the cancel) is not kept.
 */
export async function output(
  em: EntityManager,
  settings: RunSettings,
  job: JobRow,
  chunk: { stream: OutputStream; text: string },
  at: Date,
): Promise<void> {
  if (job.state === "ended" || job.streamCut) return;
  const field = chunk.stream === OutputStream.STDERR ? "stderr" : "stdout";
  const result = kept(chunk.text, byteLength(job[field]), settings.resultMaxBytes);
  const streamedPart = kept(chunk.text, job.streamBytes, settings.streamMaxBytes);
  const changes = {
    [field]: job[field] + result.text,
    streamBytes: job.streamBytes + byteLength(streamedPart.text),
    streamCut: streamedPart.truncated,
    truncated: job.truncated || result.truncated || streamedPart.truncated,
  };
  const value = create(JobOutputChunkSchema, {
    stream: chunk.stream,
    text: streamedPart.text,
    truncated: streamedPart.truncated,
  });
  await streamed(em, job, changes, "output", { case: "output", value }, at);
}

/** The job ended at `at` with `exit`; with `usage`, its usage seconds are final too. */
export async function ended(em: EntityManager, job: JobRow, exit: JobExit, at: Date, usage?: number): Promise<void> {
  if (job.state !== "ended") {
    const stored = toJson(JobExitSchema, exit, { alwaysEmitImplicit: true }) as JsonObject;
    const changes = { state: "ended", endedAt: at, exit: stored, nextAttemptAt: null };
    await streamed(em, job, changes, "ended", stateChange({ state: "ended", exit }), at);
  }
  if (usage !== undefined) await metered(em, job, usage, at);
}

/** The job's usage seconds are final: billing records them once (run.job.metered, the usage effect). */
export async function metered(em: EntityManager, job: JobRow, usage: number, at: Date): Promise<void> {
  if (job.usageFinal) return;
  changeJob(em, job, { usageSeconds: usage, usageFinal: true });
  await jobMetered(em, job, at);
}

/** Run's JobExit for bot's. */
export function exitOf(exit: BotExit | undefined): JobExit {
  return create(JobExitSchema, {
    reason: exitReasonName(exit?.reason ?? 0),
    code: exit?.code ?? 0,
    signal: exit?.signal ?? "",
    limit: exit?.limit ?? "",
    codeName: exit?.codeName ?? "",
    detail: exit?.detail ?? "",
  });
}

/** An exit run itself gives a job (canceled before start, unplaceable, lost, refused at dispatch). */
export function exitOfRun(reason: string, detail: string, codeName = ""): JobExit {
  return create(JobExitSchema, { reason, detail, codeName });
}

/**
 * The device's account of the job's end (bot's bot.job.ended, or bot's answer about it): the job ends with its exit
 * (unless it ended here before), and its usage is final: the device's start to its exit, clamped to ttl.
 */
export async function deviceEnded(
  em: EntityManager,
  job: JobRow,
  account: { exit: BotExit | undefined; startedAt?: Date; endedAt: Date },
): Promise<void> {
  const exit = exitOf(account.exit);
  const startedAt = job.startedAt ?? account.startedAt;
  changeJob(em, job, { deviceEndedAt: account.endedAt, startedAt });
  const frame = fromJson(JobFrameSchema, job.frame as JsonObject);
  const usage = usageSeconds({ startedAt, endedAt: account.endedAt, ttlMs: Number(frame.ttlMs), reason: exit.reason });
  await ended(em, job, exit, account.endedAt, usage);
}
