/**
 * The body of a function job's worker thread (started by function.ts through the kit's `moduleWorker`; it imports only
 * Node's own modules). It runs WASI modules with node:wasi, one job at a time, and hands each
 * module's stdio to the agent: stdin is the job's args, stdout and stderr go to the parent as messages. The host's
 * own stdio is never the module's (its fds 0-2 are a /dev/null the parent opened and closes), and a sleep waits on
 * Atomics.wait, which Worker.terminate interrupts, where node:wasi's poll_oneoff would block in native code past a
 * kill. node:wasi never closes the host fds behind a WASI instance (its preopen, the files the module opened), so
 * the worker closes them after each run; after a kill the parent does.
 */
import { parentPort } from "node:worker_threads";

/** What the parent posts: one job per worker. */
export interface WorkerJob {
  module: WebAssembly.Module;
  /** The artifact's name, the module's argv[0]. */
  name: string;
  stdin: Uint8Array;
  /** The job's working directory, preopened as `.`. */
  dir: string;
  /** Output past this many bytes is not posted: the worker stops there and the parent kills it. */
  outputCap: number;
  /** A /dev/null fd standing for the module's fds 0-2 where node:wasi acts on them itself. */
  nullFd: number;
}

/** What the worker posts back. */
export type WorkerMessage =
  { type: "output"; fd: 1 | 2; bytes: Uint8Array } | { type: "exit"; code: number } | { type: "trap"; message: string };

// i32 arguments arrive as numbers; path_open's two i64 ones as BigInt, and are only passed on.
type Syscall = (...args: number[]) => number;
type Wasi = typeof import("node:wasi").WASI;

// WASI errno values.
const SUCCESS = 0;
const INVAL = 28;
const NOTSUP = 58;

const SUBSCRIPTION_SIZE = 48;
const EVENT_SIZE = 32;
const CLOCK = 0;
const REALTIME = 0;
const ABSTIME = 1;

const port = parentPort;
let wasiClass: Wasi | undefined;
port?.on("message", (job: WorkerJob) => void handle(job));

async function handle(job: WorkerJob) {
  let message: WorkerMessage;
  try {
    // node:wasi warns that it is experimental when it loads, that is in every worker: the README says it once.
    process.removeAllListeners("warning");
    wasiClass ??= (await import("node:wasi")).WASI;
    message = { type: "exit", code: run(wasiClass, job, (value, transfer) => port!.postMessage(value, transfer)) };
  } catch (error) {
    message = { type: "trap", message: error instanceof Error ? error.message : String(error) };
  }
  port!.postMessage(message);
}

function run(WASI: Wasi, job: WorkerJob, post: (message: WorkerMessage, transfer?: ArrayBuffer[]) => void): number {
  const wasi = new WASI({
    version: "preview1",
    args: [job.name],
    env: {},
    preopens: { ".": job.dir },
    returnOnExit: true,
    stdin: job.nullFd,
    stdout: job.nullFd,
    stderr: job.nullFd,
  });
  const host = wasi.wasiImport as Record<string, Syscall>;
  // The host fds behind the instance, closed after the run: 3 is the preopened working directory.
  const opened = new Set<number>([3]);
  let memory: WebAssembly.Memory | undefined;
  const view = () => new DataView(memory!.buffer);
  const iovecs = (at: number, count: number) =>
    Array.from({ length: count }, (_, i) => {
      const data = view();
      return new Uint8Array(memory!.buffer, data.getUint32(at + i * 8, true), data.getUint32(at + i * 8 + 4, true));
    });

  let stdinAt = 0;
  let posted = 0;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const own: Record<string, Syscall> = {
    fd_read(fd, at, count, nread) {
      if (fd !== 0) return host.fd_read(fd, at, count, nread);
      let read = 0;
      for (const buffer of iovecs(at, count)) {
        const chunk = job.stdin.subarray(stdinAt, stdinAt + buffer.length);
        buffer.set(chunk);
        stdinAt += chunk.length;
        read += chunk.length;
        if (chunk.length < buffer.length) break;
      }
      view().setUint32(nread, read, true);
      return SUCCESS;
    },
    fd_write(fd, at, count, nwritten) {
      if (fd !== 1 && fd !== 2) return host.fd_write(fd, at, count, nwritten);
      const buffers = iovecs(at, count);
      const total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
      // One byte past the cap tells the parent it was exceeded; nothing beyond is copied.
      const room = Math.min(total, job.outputCap + 1 - posted);
      if (room > 0) {
        const bytes = new Uint8Array(room);
        let filled = 0;
        for (const buffer of buffers) {
          const part = buffer.subarray(0, room - filled);
          bytes.set(part, filled);
          filled += part.length;
          if (filled === room) break;
        }
        posted += room;
        post({ type: "output", fd, bytes }, [bytes.buffer]);
      }
      // Past the cap: wait for the parent's kill rather than run on unheard.
      if (posted > job.outputCap) Atomics.wait(sleeper, 0, 0);
      view().setUint32(nwritten, total, true);
      return SUCCESS;
    },
    poll_oneoff: (subscriptions, events, count, nevents) =>
      pollOneoff(view, sleeper, subscriptions, events, count, nevents),
    path_open(...args) {
      const result = host.path_open(...args);
      if (result === SUCCESS) opened.add(view().getUint32(args[8], true));
      return result;
    },
    // The module's stdio are the parent's /dev/null fd: never closed or moved by the module.
    fd_close(fd) {
      if (fd <= 2) return SUCCESS;
      const result = host.fd_close(fd);
      if (result === SUCCESS) opened.delete(fd);
      return result;
    },
    fd_renumber(from, to) {
      if (from <= 2 || to <= 2) return NOTSUP;
      const result = host.fd_renumber(from, to);
      if (result === SUCCESS) {
        opened.delete(from);
        opened.add(to);
      }
      return result;
    },
  };
  try {
    const instance = new WebAssembly.Instance(job.module, { wasi_snapshot_preview1: { ...host, ...own } });
    memory = instance.exports.memory as WebAssembly.Memory;
    return wasi.start(instance);
  } finally {
    for (const fd of opened) host.fd_close(fd);
  }
}

/**
 * poll_oneoff: fd subscriptions are ready at once (stdin is in memory, the rest are files); with none, the soonest
 * clock subscription is slept out on Atomics.wait.
 */
function pollOneoff(
  view: () => DataView,
  sleeper: Int32Array,
  subscriptions: number,
  events: number,
  count: number,
  nevents: number,
): number {
  if (count === 0) return INVAL;
  const data = view();
  const ready: { userdata: bigint; type: number }[] = [];
  const clocks: { userdata: bigint; ms: number }[] = [];
  for (let i = 0; i < count; i++) {
    const at = subscriptions + i * SUBSCRIPTION_SIZE;
    const userdata = data.getBigUint64(at, true);
    const type = data.getUint8(at + 8);
    if (type !== CLOCK) {
      ready.push({ userdata, type });
      continue;
    }
    const clock = data.getUint32(at + 16, true);
    const timeout = data.getBigUint64(at + 24, true);
    const absolute = (data.getUint16(at + 40, true) & ABSTIME) !== 0;
    const now = clock === REALTIME ? BigInt(Date.now()) * 1_000_000n : process.hrtime.bigint();
    const ns = absolute ? Number(timeout - now) : Number(timeout);
    clocks.push({ userdata, ms: Math.max(0, ns / 1e6) });
  }
  let fired = ready;
  if (fired.length === 0) {
    const soonest = Math.min(...clocks.map((clock) => clock.ms));
    if (soonest > 0) Atomics.wait(sleeper, 0, 0, soonest);
    fired = clocks.filter((clock) => clock.ms <= soonest).map(({ userdata }) => ({ userdata, type: CLOCK }));
  }
  const out = view();
  fired.forEach(({ userdata, type }, i) => {
    const at = events + i * EVENT_SIZE;
    for (let byte = 0; byte < EVENT_SIZE; byte++) out.setUint8(at + byte, 0);
    out.setBigUint64(at, userdata, true);
    out.setUint8(at + 10, type);
  });
  out.setUint32(nevents, fired.length, true);
  return SUCCESS;
}
