import { spawn } from "node:child_process";

/** What a program did: its exit code, its output (bounded), and whether it ended by itself. */
export interface ProgramRun {
  code: number | null;
  stdout: string;
  /** The end of what it printed on stderr. */
  stderr: string;
  /** False when it was stopped: `signal` aborted or `timeoutMs` passed (its output so far is kept). */
  finished: boolean;
}

export interface ProgramOptions {
  /** Stops it (SIGKILL) when aborted. */
  signal: AbortSignal;
  /** Stops it (SIGKILL) after this long. */
  timeoutMs?: number;
  /** Takes stdout as it comes instead of keeping it (FFmpeg's progress). */
  onStdout?: (chunk: string) => void;
  /** What a program that is not installed fails with. */
  missing: () => Error;
}

/** What a program's stdout and stderr keep at most: a probe's JSON or hops, the last words of an error. */
const KEPT_STDOUT = 64 * 1024;
const KEPT_STDERR = 4 * 1024;

/**
 * Runs a program without a shell: `args` is a list the tool built from checked input (numbers, enums, an address,
 * its own paths; never a caller's text), its environment only PATH and the C locale (none of the platform's
 * secrets; output that reads the same everywhere). Resolves once it exited or was stopped and reaped.
 */
export function runProgram(file: string, args: string[], options: ProgramOptions): Promise<ProgramRun> {
  const { signal, timeoutMs, onStdout, missing } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      resolve({ code: null, stdout: "", stderr: "", finished: false });
      return;
    }
    const child = spawn(file, args, {
      shell: false,
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
    });
    let stdout = "";
    let stderr = "";
    let finished = true;
    const stop = () => {
      finished = false;
      child.kill("SIGKILL");
    };
    const timer = timeoutMs === undefined ? undefined : setTimeout(stop, timeoutMs);
    signal.addEventListener("abort", stop, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
    };
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (onStdout) onStdout(chunk);
      else if (stdout.length < KEPT_STDOUT) stdout += chunk.slice(0, KEPT_STDOUT - stdout.length);
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-KEPT_STDERR);
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      // Only a child that never started ends here; one that was killed closes.
      if (child.pid !== undefined) return;
      done();
      reject(error.code === "ENOENT" || error.code === "EACCES" ? missing() : error);
    });
    child.once("close", (code) => {
      done();
      resolve({ code, stdout, stderr, finished });
    });
  });
}
