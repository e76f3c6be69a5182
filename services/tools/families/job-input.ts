import { open } from "node:fs/promises";
import { ToolFailure, type JobInputFile, type JobWork } from "./tool.js";

/** Points of progress between two reports of a long step (each report is a persisted job event). */
export const PROGRESS_STEP = 5;

/** The one input file a file tool works on; none, or more than one, is tools.file.missing. */
export function theInputFile(work: JobWork): JobInputFile {
  if (work.files.length !== 1) {
    throw new ToolFailure("tools.file.missing", `The tool takes one input file; it was given ${work.files.length}.`);
  }
  return work.files[0];
}

/** A file's first bytes (fewer for a shorter file): what its format is told by before any library reads it. */
export async function headOf(path: string, bytes: number): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    const head = Buffer.alloc(bytes);
    const { bytesRead } = await file.read(head, 0, bytes, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * A run's stop: its signal (a cancel, a lost lease, the runner's own deadline) or the tool's own time budget (its
 * descriptor's limits.timeoutMs), so a tool stops on time whatever runs it.
 */
export class RunStop {
  /** Aborted by either. */
  readonly signal: AbortSignal;

  constructor(
    private readonly work: JobWork,
    private readonly timeoutMs: number,
  ) {
    this.signal = AbortSignal.any([work.signal, AbortSignal.timeout(timeoutMs)]);
  }

  /**
   * Why the run stopped, if it did: the runner's reason as it is, or the tool's budget passing as its failure
   * (tools.run.timeout).
   */
  get reason(): Error | undefined {
    // An abort's reason is an Error (AbortError, TimeoutError, or the one the runner gave).
    if (this.work.signal.aborted) return this.work.signal.reason as Error;
    if (!this.signal.aborted) return undefined;
    return new ToolFailure("tools.run.timeout", `The run took longer than its budget of ${this.timeoutMs / 1000} s.`);
  }

  /** Throws why the run stopped, if it did: between steps of a library that cannot be interrupted. */
  check(): void {
    const reason = this.reason;
    if (reason !== undefined) throw reason;
  }
}
