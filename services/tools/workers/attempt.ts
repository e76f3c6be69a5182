import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { measured, type Measured } from "../../kit/blobs/measure.js";
import { BlobUnavailableError } from "../../kit/blobs/store.js";
import { outsideCall } from "../../kit/runtime/call.js";
import type { ToolDescriptor } from "../catalogue/descriptor.js";
import type { ToolsContext } from "../context.js";
import type { JobFileRow, JobRow } from "../db/entities.js";
import { endJob, heldJob, recordProgress, renewLease, requeueJob, type Attempt, type JobEnd } from "../db/job-runs.js";
import { filesOf, type StoredJobFile } from "../db/jobs.js";
import { letGoOfBlobs } from "../domain/jobs/blobs.js";
import { resultBlobKey } from "../domain/jobs/files.js";
import { percentOf } from "../domain/jobs/states.js";
import { ToolFailure, type JobInputFile, type JobTool, type JobWork } from "../families/tool.js";
import { untilAborted } from "../../kit/runtime/abort.js";

/** Why an attempt was stopped from outside the tool. */
export class AttemptStop extends Error {
  constructor(readonly why: "lost" | "stopping") {
    super(why === "lost" ? "the job is no longer this attempt's" : "the executor is stopping");
    this.name = "AttemptStop";
  }
}

/** How long a job's run may go on past its tool's own budget before the executor gives up on it. */
const GRACE_MS = 10_000;
/** A progress note is kept to this many characters. */
const MESSAGE_MAX = 200;

/** What one attempt needs of its executor. */
export interface AttemptRunner {
  ctx: ToolsContext;
  /** Aborts when the executor stops (the process is shutting down): the job goes back to the queue. */
  stopping: AbortSignal;
}

/**
 * Runs one claimed attempt of a job: its input files copied from the blob store to a directory of its own, the tool
 * run on them with progress persisted, its lease renewed every third of PF_TOOLS_LEASE_MS. The attempt stops when
 * the job is no longer its own (canceled, or taken over after its lease lapsed: seen at its next renewal or
 * progress write, at once for a cancel in this process), when its time budget passes, or when the executor stops.
 * A success stores the result files under the attempt's own keys, then ends the job in one transaction that holds
 * only while the attempt still holds the job: its result rows are the only files ever served, and a job never
 * completes twice. A ToolFailure fails the job with its reason.
 */
export async function runAttempt(runner: AttemptRunner, row: JobRow, tool: ToolDescriptor, run: JobTool) {
  const { ctx } = runner;
  const dir = await mkdtemp(join(tmpdir(), "pf-tools-job-"));
  const attempt: Attempt = { id: row.id, attempt: row.attempt };
  const news = ctx.news;
  const control = new AbortController();
  const stop = (reason: Error) => control.abort(reason);
  const renew = async () => {
    const until = new Date(ctx.clock.now().getTime() + ctx.settings.leaseMs);
    if (!(await ctx.transaction((em) => renewLease(em, attempt, until)))) stop(new AttemptStop("lost"));
  };
  // Also told by a cancel in this process: renewed outside that call (its deadline is not the executor's).
  const renewSoon = () =>
    void outsideCall(renew).catch((error: unknown) =>
      ctx.logger.warn({ err: error, job: row.id }, "a lease was not renewed"),
    );
  const renewal = setInterval(renewSoon, ctx.settings.leaseMs / 3);
  const unwatch = news.watch(row.id, renewSoon);
  const onStopping = () => stop(new AttemptStop("stopping"));
  runner.stopping.addEventListener("abort", onStopping, { once: true });
  const budget = setTimeout(
    () =>
      stop(
        new ToolFailure(
          "tools.run.timeout",
          `The job took longer than its budget of ${tool.limits.timeoutMs / 1000} s.`,
        ),
      ),
    tool.limits.timeoutMs + GRACE_MS,
  );
  const stored: StoredJobFile[] = [];
  let running: ReturnType<JobTool> | undefined;
  try {
    const files = await download(ctx, await filesOf(ctx.orm.em.fork(), row.id), join(dir, "in"));
    const work: JobWork = {
      input: row.input,
      files,
      workDir: join(dir, "out"),
      progress: progressOf(runner, attempt, control),
      signal: control.signal,
      settings: ctx.settings,
    };
    await mkdir(work.workDir);
    // Stopped while its files were copied: the tool never starts.
    if (control.signal.aborted) throw control.signal.reason as Error;
    running = run(work);
    const result = await untilAborted(running, control.signal);
    const output = runner.ctx.schemas.output(tool, result.output);
    for (const [index, file] of result.files.entries()) {
      const key = resultBlobKey(row.id, row.attempt, index + 1);
      const into: Measured = { size: 0, sha256: "" };
      await ctx.blobs.put(key, measured(createReadStream(file.path), Number.MAX_SAFE_INTEGER, into), file.contentType);
      stored.push({ name: file.name, contentType: file.contentType, ...into, blobKey: key });
    }
    const expiresAt = new Date(ctx.clock.now().getTime() + ctx.settings.resultTtlMs);
    if (await end(ctx, attempt, { state: "succeeded", output, files: stored, expiresAt })) {
      // No retry can use a succeeded job's inputs.
      await letGoOfBlobs(ctx, row.id, "input");
    } else {
      await forget(ctx, stored);
    }
  } catch (thrown) {
    await forget(ctx, stored);
    const reason: unknown = control.signal.aborted ? control.signal.reason : thrown;
    await stopped(ctx, attempt, reason);
  } finally {
    clearInterval(renewal);
    clearTimeout(budget);
    unwatch();
    runner.stopping.removeEventListener("abort", onStopping);
    // The job's outcome is recorded; a tool that cannot stop at once (a libvips operation) keeps its slot and its
    // directory until it returns, so stopped jobs never pile up past PF_TOOLS_JOBS_PER_FAMILY.
    await running?.catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/** What an attempt that did not succeed leaves: nothing when the job is not its own, else the job queued or failed. */
async function stopped(ctx: ToolsContext, attempt: Attempt, reason: unknown): Promise<void> {
  if (reason instanceof AttemptStop && reason.why === "lost") return;
  if (reason instanceof AttemptStop) {
    const at = ctx.clock.now();
    const requeued = await ctx.transaction(async (em) => {
      const row = await heldJob(em, attempt);
      if (row) await requeueJob(em, row, "The executor stopped; the job waits for another.", at);
      return row !== undefined;
    });
    if (requeued) ctx.news.tell(attempt.id);
    return;
  }
  const failure = failureOf(reason);
  if (!(reason instanceof ToolFailure)) ctx.logger.error({ err: reason, job: attempt.id }, "a job's attempt failed");
  const expiresAt = new Date(ctx.clock.now().getTime() + ctx.settings.resultTtlMs);
  await end(ctx, attempt, { state: "failed", code: failure.code, detail: failure.detail, expiresAt });
}

/** Why a job failed, in words its owner reads: the tool's own failure, the store's, or the tool's bug (logged). */
function failureOf(reason: unknown): ToolFailure {
  if (reason instanceof ToolFailure) return reason;
  if (reason instanceof BlobUnavailableError)
    return new ToolFailure("tools.store_unavailable", "The file store failed while the job ran; retry it.");
  return new ToolFailure("tools.tool.failed", "The tool failed; nothing was kept.");
}

/** Ends the job as this attempt's outcome, if the attempt still holds it; answers whether it did. */
async function end(ctx: ToolsContext, attempt: Attempt, outcome: JobEnd): Promise<boolean> {
  const ended = await ctx.transaction(async (em) => {
    const row = await heldJob(em, attempt);
    if (row) await endJob(em, row, outcome, ctx.clock.now());
    return row !== undefined;
  });
  if (ended) ctx.news.tell(attempt.id);
  return ended;
}

/** The job's progress callback: persisted (with its event) when it says something new; a lost job stops the run. */
function progressOf(runner: AttemptRunner, attempt: Attempt, control: AbortController): JobWork["progress"] {
  const { ctx } = runner;
  let last = { percent: -1, message: "" };
  return async (value, note = "") => {
    const said = { percent: percentOf(value), message: note.slice(0, MESSAGE_MAX) };
    if (control.signal.aborted || (said.percent === last.percent && said.message === last.message)) return;
    last = said;
    const held = await ctx.transaction((em) =>
      recordProgress(em, attempt, said.percent, said.message, ctx.clock.now()),
    );
    if (held) ctx.news.tell(attempt.id);
    else control.abort(new AttemptStop("lost"));
  };
}

/** Copies the job's input files from the blob store into `dir`, each as its number. */
async function download(ctx: ToolsContext, rows: JobFileRow[], dir: string): Promise<JobInputFile[]> {
  await mkdir(dir);
  const files: JobInputFile[] = [];
  for (const row of rows.filter((each) => each.kind === "input")) {
    const path = join(dir, String(row.n));
    await pipeline(await ctx.blobs.get(row.blobKey), createWriteStream(path));
    files.push({ n: row.n, name: row.name, contentType: row.contentType, size: Number(row.size), path });
  }
  return files;
}

/** Deletes result blobs no row will name (the attempt did not end the job). */
async function forget(ctx: ToolsContext, stored: StoredJobFile[]): Promise<void> {
  for (const file of stored)
    await ctx.blobs.delete(file.blobKey).catch((error: unknown) => {
      ctx.logger.warn({ err: error, key: file.blobKey }, "a result blob no row names stays until the job expires");
    });
  stored.length = 0;
}
