import { setTimeout as wait } from "node:timers/promises";
import { secretHash } from "../../kit/auth/secrets.js";
import type { Logger } from "../../kit/runtime/logger.js";
import type { ControlPlane, OutputOrder, Playback, WorkerCommand, WorkerRef } from "./control-plane.js";
import { INGEST_APP, listenIngest, type Ingest, type Publish } from "./ingest.js";
import { Output, type Backoff } from "./outputs.js";
import { listenPlayback, playbackPath, type PlaybackServer } from "./playback.js";

export interface MediaWorkerOptions {
  workerId: string;
  control: ControlPlane;
  /** The RTMP ingest's port; 0 picks a free one. */
  rtmpPort: number;
  /** The address the ingest and the playback listen on ("127.0.0.1"). */
  bind: string;
  /** The host the ingest and playback URLs name; the bind address unless it is a wildcard (then loopback). */
  publicHost?: string;
  ffmpegPath: string;
  heartbeatMs: number;
  backoff: Backoff;
  /** HTTP-FLV playback on a second port, or none. */
  playback: "flv" | "none";
  /** The playback listener's port; 0 (the default) picks a free one. */
  playbackPort?: number;
  logger: Logger;
}

export interface RunningMediaWorker {
  /** Where encoders publish: `<ingestUrl>/<ingest key>`. */
  readonly ingestUrl: string;
  /** The playback listener's origin ("" without playback). */
  readonly playbackBase: string;
  readonly generation: number;
  /** Why it stopped, once it has: `stop()`, or fenced by a newer generation. */
  readonly stopped: Promise<"stopped" | "fenced">;
  /** Ends every session (reported ended, `worker_stopped`), kills every FFmpeg, closes every socket. */
  stop(): Promise<void>;
}

/** Progress reports of a live output, at most one a second. */
const PROGRESS_EVERY_MS = 1_000;
const NO_PLAYBACK: Playback = { protocol: "none", url: "", reason: "this media worker serves no playback" };

/** Log lines waiting to be sent, at most this many (the oldest dropped past it). */
export const MAX_QUEUED_LINES = 1_000;
/** The worker API's bound on one append. */
const MAX_LINES_PER_APPEND = 200;
/** The longest wait between two tries of a state report. */
const RETRY_MAX_MS = 10_000;
/** Tries of a state report once the worker is stopping (its control plane may be gone). */
const STOPPING_TRIES = 3;

/** Where log lines belong: an output, or a session (the ingest's lines). */
type LogTarget = { outputId: string; sessionId?: undefined } | { sessionId: string; outputId?: undefined };
type QueuedLogs = { kind: "logs"; about: LogTarget; lines: string[] };
type QueuedReport = { kind: "state"; call: (ref: WorkerRef) => Promise<void> } | QueuedLogs;

/** A session this worker holds: its encoder's publish and its outputs. */
interface HeldSession {
  readonly sessionId: string;
  readonly publish: Publish;
  readonly outputs: Map<string, Output>;
  live: boolean;
  /** Set when the worker ends it (a command, its stop); otherwise the encoder left. */
  endReason?: string;
}

/**
 * The embedded media worker (the data plane `npm start` runs): RTMP ingest on node-media-server, each publish
 * authorised by its key's hash with the control plane, outputs pushed by FFmpeg, playback as HTTP-FLV. It
 * registers for a generation, heartbeats, follows the control plane's commands, and reports sessions, outputs and
 * redacted log lines in the order they happen. A fenced heartbeat (a newer generation registered) stops it without
 * reporting anything more.
 */
export class MediaWorker {
  private readonly sessions = new Map<string, HeldSession>();
  private readonly handlers = new Set<Promise<void>>();
  private readonly commands = new AbortController();
  private ref: WorkerRef | undefined;
  private ingest: Ingest | undefined;
  private playback: PlaybackServer | undefined;
  private playbackBase = "";
  private heartbeat: NodeJS.Timeout | undefined;
  /** The reports not sent yet, in the order things happened. */
  private readonly queue: QueuedReport[] = [];
  private queuedLines = 0;
  private droppedLines = 0;
  private draining: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private fenced = false;
  private ended!: (cause: "stopped" | "fenced") => void;
  private readonly stopped = new Promise<"stopped" | "fenced">((resolve) => (this.ended = resolve));
  private registered!: (ref: WorkerRef | undefined) => void;
  private readonly registration = new Promise<WorkerRef | undefined>((resolve) => (this.registered = resolve));

  constructor(private readonly options: MediaWorkerOptions) {}

  /** Listens, registers (publishes arriving meanwhile wait for the generation), then heartbeats and takes commands. */
  async start(): Promise<RunningMediaWorker> {
    const { options } = this;
    const host = urlHost(options.publicHost ?? options.bind);
    try {
      this.ingest = await listenIngest({
        bind: options.bind,
        port: options.rtmpPort,
        onPublish: (publish) => this.track(this.admit(publish)),
        onLog: (line, publish) => this.ingestLog(line, publish),
      });
      if (options.playback === "flv") {
        this.playback = await listenPlayback({
          bind: options.bind,
          port: options.playbackPort ?? 0,
          sessionPublish: (sessionId) => this.sessions.get(sessionId)?.publish,
        });
        this.playbackBase = `http://${host}:${this.playback.port}`;
      }
      const ingestUrl = `rtmp://${host}:${this.ingest.port}/${INGEST_APP}`;
      const { generation } = await options.control.register({
        workerId: options.workerId,
        ingestUrl,
        playbackBase: this.playbackBase,
      });
      const ref = { workerId: options.workerId, generation };
      this.ref = ref;
      this.registered(ref);
      this.scheduleHeartbeat();
      this.track(this.watchCommands(ref));
      return {
        ingestUrl,
        playbackBase: this.playbackBase,
        generation,
        stopped: this.stopped,
        stop: () => this.shutdown("stopped"),
      };
    } catch (error) {
      this.registered(undefined);
      await this.shutdown("stopped");
      throw error;
    }
  }

  /**
   * Authorises a publish by its key's hash; holds the session it opens until the encoder leaves or is cut. Whatever
   * happens meanwhile (a throw included), the session is let go and reported ended.
   */
  private async admit(publish: Publish): Promise<void> {
    let session: HeldSession | undefined;
    try {
      const ref = await this.registration;
      if (!ref || this.closing) return publish.disconnect();
      const keyHash = secretHash(publish.key);
      const grant = await this.options.control
        .authorizeIngest({ ...ref, keyHash, remoteAddress: publish.remoteAddress })
        .catch((error: unknown) => ({ granted: false as const, reason: `authorisation failed: ${String(error)}` }));
      if (!grant.granted) {
        // The encoder's address stays out of the log (the control plane keeps it with the session).
        this.options.logger.info({ reason: grant.reason }, "publish refused");
        return publish.disconnect();
      }
      const held: HeldSession = { sessionId: grant.sessionId, publish, outputs: new Map(), live: false };
      session = held;
      this.sessions.set(held.sessionId, held);
      if (this.closing) this.cut(held, "worker_stopped");
      const flowing = await Promise.race([publish.flowing.then(() => true), publish.left.then(() => false)]);
      if (flowing && held.endReason === undefined) {
        held.live = true;
        const playback = this.playback
          ? { protocol: "flv" as const, url: `${this.playbackBase}${playbackPath(held.sessionId)}` }
          : NO_PLAYBACK;
        this.reportState((ref) =>
          this.options.control.reportSession({
            ...ref,
            sessionId: held.sessionId,
            state: "live",
            media: publish.media(),
            playback,
          }),
        );
        for (const order of grant.outputs) this.startOutput(held, order);
      }
      await publish.left;
    } catch (error) {
      if (session) this.cut(session, "worker_error");
      else publish.disconnect();
      throw error;
    } finally {
      if (session) await this.release(session);
    }
  }

  /** Lets a session go once its encoder left or was cut: its outputs stopped, then its end reported. */
  private async release(session: HeldSession): Promise<void> {
    session.live = false;
    this.sessions.delete(session.sessionId);
    await Promise.all([...session.outputs.values()].map((output) => output.stop()));
    const endReason = session.endReason ?? "encoder_left";
    const { sessionId } = session;
    this.reportState((ref) => this.options.control.reportSession({ ...ref, sessionId, state: "ended", endReason }));
  }

  /** Disconnects a session's encoder; the session then ends with `reason`. */
  private cut(session: HeldSession, reason: string): void {
    session.endReason ??= reason;
    session.publish.disconnect();
  }

  private startOutput(session: HeldSession, order: OutputOrder): void {
    const running = session.outputs.get(order.outputId);
    if (running && running.state !== "stopped" && running.state !== "failed") return;
    const { outputId } = order;
    const output = new Output({
      order,
      publish: session.publish,
      ffmpegPath: this.options.ffmpegPath,
      backoff: this.options.backoff,
      progressEveryMs: PROGRESS_EVERY_MS,
      reports: {
        state: (state, details) =>
          this.reportState((ref) => this.options.control.reportOutput({ ...ref, outputId, state, ...details })),
        logs: (lines) => this.reportLogs({ outputId }, lines),
      },
    });
    session.outputs.set(outputId, output);
    output.start();
  }

  private async command(command: WorkerCommand): Promise<void> {
    switch (command.kind) {
      case "end_session": {
        const session = this.sessions.get(command.sessionId);
        if (session) this.cut(session, command.reason);
        return;
      }
      case "start_output": {
        const session = this.sessions.get(command.sessionId);
        if (session?.live) return this.startOutput(session, command.output);
        const reason = `session ${command.sessionId} is not live on this worker`;
        const { outputId } = command.output;
        this.reportState((ref) => this.options.control.reportOutput({ ...ref, outputId, state: "failed", reason }));
        return;
      }
      case "stop_output": {
        const holder = [...this.sessions.values()].find((session) => session.outputs.has(command.outputId));
        const output = holder?.outputs.get(command.outputId);
        holder?.outputs.delete(command.outputId);
        if (output) return output.stop();
        // Not running here: it is stopped, which the control plane may not know yet.
        const { outputId } = command;
        this.reportState((ref) => this.options.control.reportOutput({ ...ref, outputId, state: "stopped" }));
        return;
      }
    }
  }

  /**
   * Follows the commands of this generation until the worker stops; a broken watch is taken up again after the last
   * command carried out (which acknowledges it), so one cut before it was carried out comes again.
   */
  private async watchCommands(ref: WorkerRef): Promise<void> {
    const { signal } = this.commands;
    let afterSeq = 0;
    while (!signal.aborted) {
      try {
        for await (const command of this.options.control.commands({ ...ref, afterSeq }, signal)) {
          await this.command(command);
          afterSeq = command.seq;
        }
        // A watch ends short of its call's deadline: watch again at once.
        continue;
      } catch (error) {
        if (signal.aborted) return;
        this.options.logger.warn({ err: error }, "media worker: the command watch broke");
      }
      await wait(this.options.heartbeatMs, undefined, { signal }).catch(() => undefined);
    }
  }

  private scheduleHeartbeat(): void {
    this.heartbeat = setTimeout(() => void this.beat(), this.options.heartbeatMs);
  }

  private async beat(): Promise<void> {
    const ref = this.ref;
    if (!ref || this.closing) return;
    try {
      const { fenced } = await this.options.control.heartbeat({ ...ref, sessionIds: [...this.sessions.keys()] });
      if (fenced) return void this.shutdown("fenced");
    } catch (error) {
      this.options.logger.warn({ err: error }, "media worker: heartbeat failed");
    }
    if (!this.closing) this.scheduleHeartbeat();
  }

  /** Queues a state report (a session's or an output's) behind the earlier reports: sent until applied or fenced. */
  private reportState(call: (ref: WorkerRef) => Promise<void>): void {
    if (!this.ref || this.fenced) return;
    this.queue.push({ kind: "state", call });
    this.drain();
  }

  /**
   * Queues log lines behind the earlier reports, with those of the same output or session queued just before them.
   * At most MAX_QUEUED_LINES wait: past it the oldest are dropped, and counted in a line sent with the next ones.
   * Sent once: a failed append is not tried again.
   */
  private reportLogs(about: LogTarget, lines: string[]): void {
    if (!this.ref || this.fenced || lines.length === 0) return;
    const last = this.queue.at(-1);
    if (last?.kind === "logs" && last.about.outputId === about.outputId && last.about.sessionId === about.sessionId)
      last.lines.push(...lines);
    else this.queue.push({ kind: "logs", about, lines: [...lines] });
    this.queuedLines += lines.length;
    while (this.queuedLines > MAX_QUEUED_LINES) {
      const oldest = this.queue.find((report): report is QueuedLogs => report.kind === "logs")!;
      const excess = Math.min(oldest.lines.length, this.queuedLines - MAX_QUEUED_LINES);
      oldest.lines.splice(0, excess);
      this.queuedLines -= excess;
      this.droppedLines += excess;
      if (oldest.lines.length === 0) this.queue.splice(this.queue.indexOf(oldest), 1);
    }
    this.drain();
  }

  /** Sends the queued reports in order, one at a time, until none is left or the generation is fenced. */
  private drain(): void {
    this.draining ??= (async () => {
      while (this.queue.length > 0 && !this.fenced) {
        const report = this.queue[0]!;
        if (report.kind === "state") {
          await this.untilApplied(report.call);
          this.queue.shift();
          continue;
        }
        const lines = report.lines.splice(0, MAX_LINES_PER_APPEND);
        this.queuedLines -= lines.length;
        if (report.lines.length === 0) this.queue.shift();
        if (this.droppedLines > 0) {
          lines.unshift(`${this.droppedLines} log lines dropped: the control plane took them too slowly`);
          this.droppedLines = 0;
        }
        const ref = this.ref!;
        await this.options.control
          .appendLogs({ ...ref, ...report.about, lines })
          .catch((error: unknown) => this.options.logger.warn({ err: error }, "media worker: log lines not sent"));
      }
    })().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0 && !this.fenced) this.drain();
    });
  }

  /**
   * A state report, tried again (the wait doubling from PF_RESTREAM_HEARTBEAT_MS up to 10 s) until it is applied or
   * the generation fenced; once the worker is stopping, a few tries only.
   */
  private async untilApplied(call: (ref: WorkerRef) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const ref = this.ref;
      if (!ref || this.fenced) return;
      try {
        return await call(ref);
      } catch (error) {
        if (this.fenced) return;
        const giveUp = this.closing !== undefined && attempt >= STOPPING_TRIES;
        this.options.logger.warn({ err: error, attempt }, `media worker: a report failed${giveUp ? "" : ", retrying"}`);
        if (giveUp) return;
        await wait(Math.min(RETRY_MAX_MS, this.options.heartbeatMs * 2 ** (attempt - 1)));
      }
    }
  }

  private ingestLog(line: string, publish: Publish | undefined): void {
    const session = publish && [...this.sessions.values()].find((held) => held.publish === publish);
    if (!session) return void this.options.logger.debug({ line }, "media worker: ingest");
    this.reportLogs({ sessionId: session.sessionId }, [line]);
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.options.logger.error({ err: error }, "media worker failed"));
    this.handlers.add(tracked);
    void tracked.finally(() => this.handlers.delete(tracked));
  }

  private shutdown(cause: "stopped" | "fenced"): Promise<void> {
    this.closing ??= this.close(cause);
    return this.closing;
  }

  private async close(cause: "stopped" | "fenced"): Promise<void> {
    this.fenced = cause === "fenced";
    if (this.fenced) this.options.logger.warn({ workerId: this.options.workerId }, "media worker fenced: stopping");
    clearTimeout(this.heartbeat);
    this.commands.abort();
    for (const session of this.sessions.values()) this.cut(session, "worker_stopped");
    await this.ingest?.close();
    await this.playback?.close();
    while (this.handlers.size > 0) await Promise.all(this.handlers);
    while (this.draining) await this.draining;
    this.ended(cause);
  }
}

/** A host as a URL names it (an IPv6 address in brackets); a wildcard bind is reached on loopback. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}
