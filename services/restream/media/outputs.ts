import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { OutputOrder, OutputProgress, OutputState } from "./control-plane.js";
import type { Publish } from "./ingest.js";
import { ProgressReader } from "./progress.js";
import { redactLine } from "../domain/redact.js";

/** Restarts of an output whose FFmpeg exited while its session is live. */
export interface Backoff {
  /** The wait before the first restart; each next one doubles it… */
  initialMs: number;
  /** …up to this. */
  maxMs: number;
  /** Exits in a row (without reaching live between them) after which the output fails. */
  maxFailures: number;
}

/** What an output tells the worker, in order. */
export interface OutputReports {
  state(state: OutputState, details?: { reason?: string; progress?: OutputProgress }): void;
  /** Lines already redacted and bounded. */
  logs(lines: string[]): void;
}

export interface OutputOptions {
  order: OutputOrder;
  /** The session's publish: what FFmpeg reads, and the ingest key it must never log. */
  publish: Publish;
  ffmpegPath: string;
  backoff: Backoff;
  reports: OutputReports;
  /** Progress reports at most this often while live. */
  progressEveryMs: number;
}

/** The wait before restart number `failures` (1 for the first): exponential, capped. */
export function restartDelay(failures: number, backoff: Backoff): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, failures - 1));
}

/** How long a stopping FFmpeg may flush to its destination after its input ended, before it is killed. */
const STOP_GRACE_MS = 2_000;
/** Stream FFmpeg has not taken yet (a destination too slow): past this the run is cut and counts as a failure. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** The longest partial line of FFmpeg's stderr kept while its end is awaited. */
export const MAX_PENDING_CHARS = 4_096;

type FFmpeg = ChildProcessByStdio<Writable, Readable, Readable>;

/**
 * One destination of a live session pushed by one FFmpeg at a time: `-c copy` from the session's FLV on its stdin
 * (node-media-server's broadcast, read in process: the ingest key is never in its arguments), `-f flv` for rtmp and
 * rtmps, `-f mpegts` for srt. An exit while the session is live restarts it after a backoff; `maxFailures` exits in
 * a row fail it with the last error. Every stderr line is redacted (the order's secrets, the ingest key, URLs).
 */
export class Output {
  private current: OutputState = "starting";
  private child: FFmpeg | undefined;
  private failures = 0;
  private restart: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: OutputOptions) {}

  get state(): OutputState {
    return this.current;
  }

  get outputId(): string {
    return this.options.order.outputId;
  }

  /** Starts the first run. */
  start(): void {
    this.options.reports.state("starting");
    this.run();
  }

  /** Stops it (its FFmpeg flushed, or killed after a grace): `stopped` unless it had failed. Resolves once reaped. */
  stop(): Promise<void> {
    this.stopping ??= this.halt();
    return this.stopping;
  }

  private async halt(): Promise<void> {
    clearTimeout(this.restart);
    const child = this.child;
    if (child) {
      const exited = new Promise((resolve) => child.once("close", resolve));
      child.stdin.end();
      const kill = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(kill);
    }
    if (this.current !== "failed") this.enter("stopped");
  }

  private enter(state: OutputState, details?: { reason?: string; progress?: OutputProgress }): void {
    this.current = state;
    this.options.reports.state(state, details);
  }

  private run(): void {
    const { order, publish, ffmpegPath, reports } = this.options;
    const secrets = [...order.secrets, publish.key];
    const lines = (text: string) =>
      text
        .split(/\r?\n|\r/)
        .filter((line) => line.trim() !== "")
        .map((line) => redactLine(line, secrets));
    const child = spawn(ffmpegPath, ffmpegArguments(order), {
      shell: false,
      stdio: ["pipe", "pipe", "pipe"],
      // None of the platform's secrets in its environment; messages that read the same everywhere.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
    });
    this.child = child;
    let lastError = "";
    let spawnError: string | undefined;
    let pending = "";
    // Within a line longer than MAX_PENDING_CHARS: its rest is dropped up to the next line break.
    let skipping = false;
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) spawnError = `FFmpeg could not start (${error.code ?? error.message})`;
    });
    child.stdin.on("error", () => undefined); // EPIPE once FFmpeg exited: its close says why
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      let text = chunk;
      if (skipping) {
        const end = text.search(/[\r\n]/);
        if (end < 0) return;
        skipping = false;
        text = text.slice(end + 1);
      }
      text = pending + text;
      const cut = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
      pending = text.slice(cut + 1);
      const done = lines(text.slice(0, cut + 1));
      if (pending.length > MAX_PENDING_CHARS) {
        // Dropped whole: a part of it could hold part of a secret, which no pattern would match.
        pending = "";
        skipping = true;
        done.push(`FFmpeg wrote a line longer than ${MAX_PENDING_CHARS} characters: dropped`);
      }
      if (done.length === 0) return;
      lastError = done[done.length - 1];
      reports.logs(done);
    });
    const progress = new ProgressReader();
    let reportedAt = -Infinity;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      for (const health of progress.push(chunk)) {
        if (this.stopping) return;
        if (health.frames === 0 && health.outTimeMs === 0) continue;
        const now = performance.now();
        if (this.current === "live" && now - reportedAt < this.options.progressEveryMs) continue;
        reportedAt = now;
        if (this.current !== "live") this.failures = 0;
        this.enter("live", { progress: health });
      }
    });
    // The read is let go before the kill of a run cut for slowness: no more chunks to a process being killed (the
    // cached headers `read` sends at once are far below the bound, so `detach` is known by then).
    let cut = false;
    const detach = publish.read((chunk) => {
      if (cut || !child.stdin.writable) return;
      if (child.stdin.writableLength > MAX_BUFFERED_BYTES) {
        cut = true;
        reports.logs(["the destination takes the stream too slowly: reconnecting"]);
        detach();
        child.kill("SIGKILL");
        return;
      }
      child.stdin.write(chunk);
    });
    child.once("close", (code, signal) => {
      detach();
      this.child = undefined;
      const rest = lines(pending);
      if (rest.length > 0) {
        lastError = rest[rest.length - 1];
        reports.logs(rest);
      }
      if (this.stopping) return;
      this.failures += 1;
      const exit =
        spawnError ?? `FFmpeg exited (${signal ?? `code ${String(code)}`})${lastError ? `: ${lastError}` : ""}`;
      const { backoff } = this.options;
      if (spawnError !== undefined || this.failures >= backoff.maxFailures) {
        const reason = redactLine(`${exit}; gave up after ${this.failures} failed runs in a row`, secrets);
        reports.logs([reason]);
        this.enter("failed", { reason });
        return;
      }
      const delay = restartDelay(this.failures, backoff);
      reports.logs([redactLine(`${exit}; restarting in ${delay} ms`, secrets)]);
      if (this.current !== "reconnecting") this.enter("reconnecting", { reason: redactLine(exit, secrets) });
      this.restart = setTimeout(() => this.run(), delay);
    });
  }
}

/**
 * FFmpeg's arguments: the session's FLV from stdin, copied to the destination; progress on stdout. The FLV starts
 * with every codec header (node-media-server's cache), so half a second of probing finds the streams (the default
 * 5 s delays the destination's first frame).
 */
export function ffmpegArguments(order: OutputOrder): string[] {
  return [
    ...["-hide_banner", "-loglevel", "warning", "-nostats", "-progress", "pipe:1", "-stats_period", "0.5"],
    ...["-analyzeduration", "500000", "-f", "flv", "-i", "pipe:0", "-c", "copy"],
    ...(order.format === "flv" ? ["-flvflags", "no_duration_filesize"] : []),
    ...["-f", order.format, order.url],
  ];
}
