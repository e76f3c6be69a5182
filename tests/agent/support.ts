import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromJson, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { pino } from "pino";
import {
  JobFrameSchema,
  type JobExit,
  type JobInputSchema,
  type JobLimitsSchema,
} from "../../gen/pf/bot/v1/jobs_pb.js";
import { JobDispatchSchema, type LinkFrame } from "../../gen/pf/bot/v1/link_pb.js";
import { DEFAULT_CAPS } from "../../agent/agent.js";
import { loadCatalogue, type Catalogue } from "../../agent/catalogue/catalogue.js";
import type { OwnCaps } from "../../agent/job-rules.js";
import { Jobs } from "../../agent/jobs.js";
import { CodeSandbox, type CodeSupport } from "../../agent/sandbox/code.js";
import { FunctionSandbox } from "../../agent/sandbox/function.js";
import { until } from "../support/until.js";

export const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** A job frame as a test writes it: args as plain JSON, ttl 10 s and no limits of its own unless told. */
export interface TestJob {
  class: string;
  artifact: string;
  args: unknown;
  ttlMs?: bigint;
  limits?: MessageInitShape<typeof JobLimitsSchema>;
  inputs?: MessageInitShape<typeof JobInputSchema>[];
}

/**
 * The agent's job runner with its real sandboxes and catalogue, and no link: every frame it sends is kept in
 * `frames`. `code` defaults to what this host offers.
 */
export async function jobsUnderTest(options: { caps?: Partial<OwnCaps>; code?: CodeSupport; mediaUrl?: string } = {}) {
  const code = options.code ?? (await CodeSandbox.detect());
  const catalogue: Catalogue = await loadCatalogue(["function", "code"]);
  const caps = { ...DEFAULT_CAPS, ...options.caps };
  const functions = new FunctionSandbox(caps.slots);
  const workRoot = await mkdtemp(join(tmpdir(), "pf-agent-test-"));
  const frames: LinkFrame[] = [];
  const jobs = new Jobs({
    catalogue,
    caps,
    code,
    functions,
    workRoot,
    mediaUrl: options.mediaUrl ?? "http://127.0.0.1:9/media",
    logger: pino({ level: "silent" }),
    send: (frame) => frames.push(frame),
  });
  const of = (id: string) => frames.filter((frame) => (frame.frame.value as { jobId?: string }).jobId === id);
  return {
    jobs,
    frames,
    catalogue,
    workRoot,
    /** Sends a `job` frame as bot would. */
    dispatch(id: string, job: TestJob, mediaUrl = "") {
      const frame = create(JobFrameSchema, {
        ttlMs: 10_000n,
        limits: {},
        ...job,
        args: fromJson(ValueSchema, job.args as JsonValue),
      });
      jobs.receive(create(JobDispatchSchema, { jobId: id, job: frame, mediaUrl }));
    },
    /** The cases of the frames sent about a job, in order. */
    kinds: (id: string) => of(id).map((frame) => frame.frame.case),
    /** The stdout and stderr text sent about a job, in order. */
    text: (id: string, stream?: number) =>
      of(id)
        .flatMap((frame) =>
          frame.frame.case === "output" && (stream === undefined || frame.frame.value.stream === stream)
            ? [frame.frame.value.text]
            : [],
        )
        .join(""),
    /** Waits for the job's exit. */
    async exit(id: string): Promise<JobExit> {
      let exit: JobExit | undefined;
      await until(() => {
        const frame = of(id).find((candidate) => candidate.frame.case === "exit");
        exit = frame?.frame.case === "exit" ? frame.frame.value.exit : undefined;
        return exit !== undefined;
      });
      return exit!;
    },
    /** Waits until the job has started. */
    started: (id: string) => until(() => of(id).some((frame) => frame.frame.case === "started")),
    /** What is left in the work folder (each job's directory is removed once it ended). */
    leftovers: () => readdir(workRoot),
    async close() {
      await jobs.stopAll("the test ended");
      await functions.close();
      await rm(workRoot, { recursive: true, force: true });
    },
  };
}
