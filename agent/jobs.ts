import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Logger } from "pino";
import { ExitReason, JobExitSchema } from "../gen/pf/bot/v1/jobs_pb.js";
import type { JobDispatch, LinkFrame } from "../gen/pf/bot/v1/link_pb.js";
import type { Catalogue } from "./catalogue/catalogue.js";
import { fetchInputs } from "./inputs.js";
import { planJob, stricterTtl, type JobPlan, type OwnCaps } from "./job-rules.js";
import { frameOf } from "./link.js";
import { OutputPump } from "./output.js";
import type { CodeSupport } from "./sandbox/code.js";
import type { FunctionSandbox } from "./sandbox/function.js";
import type { Ended, Running } from "./sandbox/running.js";

type Exit = MessageInitShape<typeof JobExitSchema>;

/** The problem code of a job that never ran or was stopped because the robot's e-stop is latched. */
export const ESTOP_LATCHED = "bot.estop_latched";
/** The problem code of an input whose bytes are not the pinned ones (the spec's). */
export const INPUT_DIGEST_MISMATCH = "run.job.input_digest_mismatch";

/** How many ended jobs' exits are kept, to answer a job frame bot sends again (after a reconnect) without a rerun. */
const REMEMBERED_EXITS = 1000;

export interface JobsOptions {
  catalogue: Catalogue;
  caps: OwnCaps;
  code: CodeSupport;
  functions: FunctionSandbox;
  /** Where inputs are read when a job frame names no media address: the gateway's own media (`<url>/media`). */
  mediaUrl: string;
  /** Each job's working directory is made fresh under this folder, and removed once the job ended. */
  workRoot: string;
  send(frame: LinkFrame): void;
  logger: Logger;
}

interface Job {
  id: string;
  dispatch: JobDispatch;
  phase: "waiting" | "preparing" | "running" | "ended";
  plan?: JobPlan;
  ttl: NodeJS.Timeout;
  /** Stops an input fetch under way. */
  abort: AbortController;
  running?: Running;
  /** Why the agent killed it, once it did. */
  killed?: Exit;
  startedAt?: Date;
}

/**
 * The jobs on this device, from the `job` frame to the `exit` frame: ack at once (ttl counts from here), check and
 * plan (refused: exit `refused`), wait for a slot, fetch and verify inputs into a fresh working directory, start
 * unless cancelled or expired meanwhile, stream output, and report how it ended. Cancel, ttl, e-stop and limits
 * end a job that has not started and kill one that has, and the exit says which.
 */
export class Jobs {
  private readonly jobs = new Map<string, Job>();
  private readonly queue: Job[] = [];
  private readonly exits = new Map<string, LinkFrame>();
  private active = 0;
  private latched = false;

  constructor(private readonly options: JobsOptions) {}

  /** Ids of the jobs not yet ended here (waiting, preparing or running). */
  ids(): string[] {
    return [...this.jobs.keys()];
  }

  /** A `job` frame. */
  receive(dispatch: JobDispatch): void {
    const receivedAt = new Date();
    const id = dispatch.jobId;
    const { send, logger } = this.options;
    send(frameOf({ case: "ack", value: { jobId: id, receivedAt: timestampFromDate(receivedAt) } }));
    const exit = this.exits.get(id);
    if (exit) return send(exit);
    if (this.jobs.has(id)) return;
    const ttlMs = stricterTtl(dispatch.job?.ttlMs ?? 0n, this.options.caps.maxTtlMs);
    const job: Job = {
      id,
      dispatch,
      phase: "waiting",
      abort: new AbortController(),
      ttl: setTimeout(() => this.stop(job, { reason: ExitReason.TTL, detail: `ttl of ${ttlMs} ms ran out` }), ttlMs),
    };
    this.jobs.set(id, job);
    logger.info({ job: id, class: dispatch.job?.class, artifact: dispatch.job?.artifact, ttlMs }, "job received");
    if (this.latched) return this.end(job, estopExit("refused"));
    const plan = planJob(dispatch.job, this.options.catalogue, this.options.caps, this.options.code);
    if ("refused" in plan)
      return this.end(job, { reason: ExitReason.REFUSED, detail: plan.refused, limit: plan.limit ?? "" });
    job.plan = plan;
    this.queue.push(job);
    this.next();
  }

  /** A `job_cancel` frame: a job that has not started never does; a running one is killed. */
  cancel(id: string): void {
    const job = this.jobs.get(id);
    if (job) this.stop(job, { reason: ExitReason.CANCELED, detail: "cancelled" });
  }

  /** An `estop` frame (or the latch read at start): latched stops every job and refuses new ones until cleared. */
  estop(latched: boolean): void {
    this.latched = latched;
    if (!latched) return;
    for (const job of this.jobs.values()) this.stop(job, estopExit("canceled"));
  }

  /** Stops every job (the agent is stopping, or its credential is gone) and waits for them to end. */
  async stopAll(detail: string): Promise<void> {
    const running = [...this.jobs.values()].flatMap((job) => (job.running ? [job.running.done] : []));
    for (const job of this.jobs.values()) this.stop(job, { reason: ExitReason.CANCELED, detail });
    await Promise.all(running);
  }

  /** Ends a job that has not started; kills one that has (it ends when its run does). */
  private stop(job: Job, exit: Exit) {
    if (job.phase === "ended") return;
    if (!job.running) return this.end(job, exit);
    job.killed ??= exit;
    job.running.kill();
  }

  /** Starts waiting jobs while slots are free. */
  private next() {
    while (this.active < this.options.caps.slots && this.queue.length > 0) {
      const job = this.queue.shift()!;
      if (job.phase === "ended") continue;
      this.active++;
      void this.run(job)
        .catch((error: unknown) =>
          this.end(job, {
            reason: ExitReason.FAILED,
            detail: `the agent failed: ${error instanceof Error ? error.message : String(error)}`,
          }),
        )
        .finally(() => {
          this.active--;
          this.next();
        });
    }
  }

  private async run(job: Job) {
    const plan = job.plan!;
    job.phase = "preparing";
    const dir = await mkdtemp(join(this.options.workRoot, "job-"));
    try {
      if (plan.inputs.length > 0) {
        const fault = await fetchInputs(
          job.dispatch.mediaUrl || this.options.mediaUrl,
          plan.inputs,
          dir,
          job.abort.signal,
        ).catch((error: unknown) => {
          if (hasEnded(job)) return undefined;
          throw error;
        });
        if (fault && "mismatch" in fault)
          this.end(job, {
            reason: ExitReason.INPUT_DIGEST_MISMATCH,
            codeName: INPUT_DIGEST_MISMATCH,
            detail: fault.mismatch,
          });
        else if (fault) this.end(job, { reason: ExitReason.FAILED, detail: fault.unavailable });
      }
      // The last look before the start: nothing is awaited from here to the spawn, so a job_cancel, the ttl or an
      // e-stop that came first has ended the job already, and it never starts.
      if (hasEnded(job)) return;
      await this.start(job, plan, dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async start(job: Job, plan: JobPlan, dir: string) {
    const { send, functions, code } = this.options;
    const pump = new OutputPump(
      plan.limits.outputBytes,
      (stream, seq, text) =>
        send(frameOf({ case: "output", value: { jobId: job.id, stream, seq: BigInt(seq), text } })),
      () => this.stop(job, { reason: ExitReason.LIMIT, limit: "output_bytes", detail: "output_bytes exceeded" }),
    );
    job.phase = "running";
    job.startedAt = new Date();
    send(frameOf({ case: "started", value: { jobId: job.id, startedAt: timestampFromDate(job.startedAt) } }));
    this.options.logger.info({ job: job.id }, "job started");
    const sink = (fd: 1 | 2, bytes: Uint8Array) => pump.write(fd, bytes);
    const { artifact, stdin, limits } = plan;
    job.running =
      artifact.class === "function"
        ? functions.run(
            { module: artifact.module!, name: artifact.name, stdin, dir, outputCap: limits.outputBytes },
            sink,
          )
        : code.available
          ? code.sandbox.run(
              { script: artifact.script!, stdin, dir, memoryBytes: limits.memoryBytes, cpuMs: limits.cpuMs },
              sink,
            )
          : undefined;
    if (!job.running) throw new Error("a code job was planned on a host that cannot run one");
    const ended = await job.running.done;
    pump.end();
    this.end(job, exitOf(ended, job.killed));
  }

  /** Sends the job's exit and forgets it (but for its exit frame). */
  private end(job: Job, exit: Exit) {
    if (job.phase === "ended") return;
    job.phase = "ended";
    clearTimeout(job.ttl);
    job.abort.abort();
    this.jobs.delete(job.id);
    const frame = frameOf({
      case: "exit",
      value: {
        jobId: job.id,
        exit,
        ...(job.startedAt ? { startedAt: timestampFromDate(job.startedAt) } : {}),
        endedAt: timestampFromDate(new Date()),
      },
    });
    this.exits.set(job.id, frame);
    if (this.exits.size > REMEMBERED_EXITS) this.exits.delete(this.exits.keys().next().value!);
    this.options.send(frame);
    const { reason, limit, detail } = exit;
    this.options.logger.info({ job: job.id, reason: ExitReason[reason ?? 0], limit, detail }, "job ended");
  }
}

/** Whether the job ended, read afresh after an await (a frame may have ended it meanwhile). */
const hasEnded = (job: Job) => job.phase === "ended";

/** How a run ended, in the exit's words: the agent's own kill first, then the sandbox's limit, then the process. */
function exitOf(ended: Ended, killed: Exit | undefined): Exit {
  const how = { code: ended.code ?? 0, signal: ended.signal ?? "" };
  if (killed && ended.signal) return { ...killed, ...how };
  if (ended.limit) return { reason: ExitReason.LIMIT, limit: ended.limit, detail: `${ended.limit} exceeded`, ...how };
  if (ended.error) return { reason: ExitReason.FAILED, detail: ended.error, ...how };
  if (ended.code === 0) return { reason: ExitReason.COMPLETED, ...how };
  return {
    reason: ExitReason.FAILED,
    detail: ended.signal ? `killed by ${ended.signal}` : `exited ${ended.code ?? "without a code"}`,
    ...how,
  };
}

/** The exit of a job the e-stop kept from running (`refused`) or stopped (`canceled`). */
function estopExit(as: "refused" | "canceled"): Exit {
  return {
    reason: as === "refused" ? ExitReason.REFUSED : ExitReason.CANCELED,
    codeName: ESTOP_LATCHED,
    detail: "the robot's e-stop is latched",
  };
}
