import { closeSync, openSync, readdirSync, readlinkSync } from "node:fs";
import type { Worker } from "node:worker_threads";
import { moduleWorker } from "../../services/kit/runtime/module-worker.js";
import type { Ended, OutputSink, Running } from "./running.js";
import type { WorkerJob, WorkerMessage } from "./wasi-worker.js";

/** A function job as the sandbox runs it. */
export interface FunctionRun {
  module: WebAssembly.Module;
  name: string;
  stdin: Uint8Array;
  dir: string;
  outputCap: number;
}

/**
 * Runs function jobs, each in a worker thread with node:wasi: no sockets (WASI preview 1 opens none), memory bounded
 * by the module's declared maximum (checked before the run), and a kill that is Worker.terminate. A worker whose
 * job ended by itself takes the next one, and from the first job on one started spare is kept, so a job does not
 * wait for a thread to boot. None is started before: an agent that runs no function job holds no thread (~10 MB).
 */
export class FunctionSandbox {
  private readonly idle: Worker[] = [];
  private closed = false;

  /** `keep`: how many idle workers are kept (the agent's slots). */
  constructor(private readonly keep = 1) {}

  run(job: FunctionRun, sink: OutputSink): Running {
    const worker = this.idle.pop() ?? this.spawn();
    if (this.idle.length === 0 && !this.closed) this.idle.push(this.spawn());
    worker.ref();
    const nullFd = openSync("/dev/null", "r+");
    let killed = false;
    let settle: (ended: Ended) => void = () => {};
    const done = new Promise<Ended>((resolve) => (settle = resolve));
    let failure: string | undefined;
    const onMessage = (message: WorkerMessage) => {
      if (message.type === "output") return sink(message.fd, message.bytes);
      release();
      this.reuse(worker);
      settle(message.type === "exit" ? { code: message.code } : { error: message.message });
    };
    const onError = (error: Error) => (failure = `the worker failed: ${error.message}`);
    const onExit = () => {
      release();
      // The worker's node:wasi left its host fds open: the working directory and what the module opened in it.
      closeFdsUnder(job.dir);
      settle(killed ? { signal: "SIGKILL" } : { error: failure ?? "the worker ended" });
    };
    const release = () => {
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      closeSync(nullFd);
    };
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);
    worker.postMessage({ ...job, nullFd } satisfies WorkerJob);
    return {
      done,
      kill() {
        killed = true;
        void worker.terminate();
      },
    };
  }

  /** Stops the idle workers; runs under way go on. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((worker) => worker.terminate()));
  }

  private reuse(worker: Worker) {
    if (this.closed || this.idle.length >= this.keep) return void worker.terminate();
    worker.unref();
    this.idle.push(worker);
  }

  private spawn(): Worker {
    const worker = moduleWorker(import.meta.url, "wasi-worker", {
      // The module's memory is bounded by its declared maximum; these bound the JavaScript around it.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    });
    // An idle worker keeps no process alive.
    worker.unref();
    worker.once("exit", () => {
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
    });
    return worker;
  }
}

/** Closes this process's fds open on `dir` or below, read from Linux's /proc/self/fd (elsewhere: none found). */
function closeFdsUnder(dir: string) {
  let fds: string[];
  try {
    fds = readdirSync("/proc/self/fd");
  } catch {
    return;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target === dir || target.startsWith(`${dir}/`)) closeSync(Number(fd));
  }
}
