import { runProgram } from "../../families/program.js";
import { ToolFailure } from "../../families/tool.js";
import { budgetSpent } from "./tcp.js";

/** What a probe program printed, and whether it ended by itself (false: stopped at `timeoutMs`). */
export interface CommandOutput {
  stdout: string;
  exitCode: number | null;
  finished: boolean;
}

/**
 * Runs a probe program (`ping`, `traceroute`) as every program runs (families/program.ts: no shell, C locale, PATH
 * only), stopped at `timeoutMs` or when `signal` aborts with its output so far. A program not installed fails the
 * run; a run whose budget is already spent does not start.
 */
export async function runCommand(
  file: string,
  args: string[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<CommandOutput> {
  if (signal.aborted) throw budgetSpent();
  const missing = () => new ToolFailure("tools.probe.failed", `The ${file} program is not installed here.`);
  const run = await runProgram(file, args, { signal, timeoutMs, missing });
  return { stdout: run.stdout, exitCode: run.code, finished: run.finished };
}
