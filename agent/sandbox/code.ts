import { spawn } from "node:child_process";
import { accessSync, constants as fsConstants, lstatSync, readlinkSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { killTree, sampleTree } from "./process-tree.js";
import type { Ended, OutputSink, Running } from "./running.js";

/** Whether this host can run `code` jobs, and why not. */
export type CodeSupport = { available: true; sandbox: CodeSandbox } | { available: false; why: string };

/** A code job as the sandbox runs it. */
export interface CodeRun {
  script: string;
  stdin: Uint8Array;
  dir: string;
  memoryBytes: number;
  cpuMs: number;
}

const SAMPLE_MS = 50;

/**
 * Runs `code` jobs: `/bin/sh <script>` under prlimit (address space, CPU seconds, no core file) inside bubblewrap
 * with every namespace unshared: no network (a fresh namespace with only a down loopback), its own pids, no
 * capabilities, and a file system of /usr, the working directory and the script's folder only, so neither this
 * agent's state file (its credential) nor anything else of the host is readable. The process tree is sampled every
 * 50 ms and killed past the job's memory (resident) or CPU limit, which it then names.
 */
export class CodeSandbox {
  private constructor(
    private readonly prlimit: string,
    private readonly bwrap: string,
    private readonly base: string[],
  ) {}

  /** Tries bubblewrap once and keeps it only if the job would see a network namespace with nothing but loopback. */
  static async detect(): Promise<CodeSupport> {
    const prlimit = findProgram("prlimit");
    if (!prlimit) return { available: false, why: "prlimit (util-linux) is not installed" };
    const bwrap = findProgram("bwrap");
    if (!bwrap) return { available: false, why: "bubblewrap (bwrap) is not installed" };
    const base = bwrapBase();
    const probe = await capture(bwrap, [...base, "--", "/bin/cat", "/proc/net/dev"]);
    if (probe.code !== 0)
      return { available: false, why: `bubblewrap cannot unshare namespaces here: ${probe.stderr}` };
    const interfaces = probe.stdout
      .split("\n")
      .slice(2)
      .map((line) => line.split(":")[0].trim())
      .filter(Boolean);
    if (interfaces.join() !== "lo") return { available: false, why: `the sandbox still sees ${interfaces.join(", ")}` };
    return { available: true, sandbox: new CodeSandbox(prlimit, bwrap, base) };
  }

  run(job: CodeRun, sink: OutputSink): Running {
    const scripts = dirname(job.script);
    // The sampler enforces both limits and names them; prlimit backs it up between samples: an address space of
    // twice the memory limit (a process's address space runs ahead of its resident memory, so the limit itself
    // would fail allocations the job's resident size never reaches) and CPU seconds (SIGXCPU, SIGKILL a second on).
    const seconds = Math.max(1, Math.ceil(job.cpuMs / 1000));
    const child = spawn(
      this.prlimit,
      [
        `--as=${2 * job.memoryBytes}`,
        `--cpu=${seconds}:${seconds + 1}`,
        "--core=0",
        "--",
        this.bwrap,
        ...this.base,
        ...["--bind", job.dir, job.dir, "--chdir", job.dir, "--ro-bind", scripts, scripts],
        "--",
        "/bin/sh",
        job.script,
      ],
      // Nothing of the agent's environment reaches the job.
      { stdio: ["pipe", "pipe", "pipe"], env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" } },
    );
    let limit: string | undefined;
    let killed = false;
    // Once the top process exited (reaped), its pid may be another process's: never signalled again.
    let exited = false;
    child.once("exit", () => (exited = true));
    const kill = () => {
      if (exited || child.pid === undefined) return;
      killed = true;
      killTree(child.pid);
    };
    const sampler = setInterval(() => {
      if (child.pid === undefined || exited) return;
      // Until the top exits: a process forked while the tree was being killed is killed on the next tick.
      if (killed) return killTree(child.pid);
      const { cpuMs, rssBytes } = sampleTree(child.pid);
      if (cpuMs > job.cpuMs) limit ??= "cpu_ms";
      else if (rssBytes > job.memoryBytes) limit ??= "memory_bytes";
      if (limit) kill();
    }, SAMPLE_MS);
    child.stdout.on("data", (bytes: Buffer) => sink(1, bytes));
    child.stderr.on("data", (bytes: Buffer) => sink(2, bytes));
    // A job that does not read its stdin closes the pipe early: not a failure of the agent.
    child.stdin.on("error", () => {});
    child.stdin.end(job.stdin);
    const done = new Promise<Ended>((resolve) => {
      child.once("error", (error) => {
        clearInterval(sampler);
        resolve({ error: `the sandbox did not start: ${error.message}` });
      });
      child.once("close", (code, signal) => {
        clearInterval(sampler);
        // bwrap reports a job ended by a signal as 128 + its number.
        if (!killed && code === 128 + constants.signals.SIGXCPU) limit = "cpu_ms";
        // Killed, it ended by our SIGKILL even where its top process saw its children die first and exited itself.
        const ended = killed ? "SIGKILL" : signal;
        resolve({
          ...(code === null || killed ? {} : { code }),
          ...(ended ? { signal: ended } : {}),
          ...(limit ? { limit } : {}),
        });
      });
    });
    return { done, kill };
  }
}

/**
 * bubblewrap's arguments but the job's own: every namespace unshared, no capabilities, a new session (no terminal
 * to inject into), and read-only /usr with the root's links into it (/bin, /lib… on a merged /usr).
 */
function bwrapBase(): string[] {
  const root: string[] = [];
  for (const top of ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"]) {
    try {
      const stat = lstatSync(top);
      if (stat.isSymbolicLink()) root.push("--symlink", readlinkSync(top), top);
      else if (stat.isDirectory()) root.push("--ro-bind", top, top);
    } catch {
      // Not on this host.
    }
  }
  return [
    ...["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"],
    ...["--ro-bind", "/usr", "/usr", ...root, "--ro-bind-try", "/etc/alternatives", "/etc/alternatives"],
    ...["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
  ];
}

/** A program's path on this process's PATH, if it is there. */
function findProgram(name: string): string | undefined {
  for (const folder of (process.env.PATH ?? "/usr/bin:/bin").split(delimiter)) {
    const path = join(folder, name);
    try {
      accessSync(path, fsConstants.X_OK);
      return path;
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** Runs a probe to its end: its exit code and output. */
function capture(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { PATH: "/usr/bin:/bin" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (bytes: Buffer) => (stdout += bytes.toString()));
    child.stderr.on("data", (bytes: Buffer) => (stderr += bytes.toString()));
    child.once("error", (error) => resolve({ code: null, stdout, stderr: error.message }));
    child.once("close", (code) => resolve({ code, stdout, stderr: stderr.trim() }));
  });
}
