/**
 * What the embedded media worker (the data plane) asks of restream's control plane. The control plane implements it
 * over the internal worker API (RestreamWorkerService); the worker knows nothing else of restream.
 */
export interface ControlPlane {
  /** Registers this worker: the answer is its new generation, which every later call carries. */
  register(input: { workerId: string; ingestUrl: string; playbackBase: string }): Promise<{ generation: number }>;
  /** fenced: this generation is no longer current (another registered): stop everything. */
  heartbeat(input: WorkerRef & { sessionIds: string[] }): Promise<{ fenced: boolean }>;
  /** The publish's key hash (sha256 hex of the key from the RTMP path) → a session, or why not. */
  authorizeIngest(input: WorkerRef & { keyHash: string; remoteAddress: string }): Promise<IngestGrant>;
  /**
   * A session went live (media flowing) or ended. Resolves once answered (a refusal for good included); rejects when
   * it may pass if tried again, and the worker tries again (as it does for reportOutput).
   */
  reportSession(
    input: WorkerRef & {
      sessionId: string;
      state: "live" | "ended";
      endReason?: string;
      media?: MediaInfo;
      playback?: Playback;
    },
  ): Promise<void>;
  /** An output's state, with its health while live. */
  reportOutput(
    input: WorkerRef & { outputId: string; state: OutputState; reason?: string; progress?: OutputProgress },
  ): Promise<void>;
  /** Log lines of an output or a session, already redacted and bounded. */
  appendLogs(input: WorkerRef & { outputId?: string; sessionId?: string; lines: string[] }): Promise<void>;
  /**
   * Commands for this worker generation after `afterSeq`, the seq of the last one the worker carried out (which
   * acknowledges it and those before), until signal aborts or the watch ends (watch again from the last seq). A
   * command may come again after a cut watch: each is safe to repeat.
   */
  commands(input: WorkerRef & { afterSeq: number }, signal: AbortSignal): AsyncIterable<WorkerCommand>;
}

/** Who reports: a worker and the generation it registered as. */
export interface WorkerRef {
  workerId: string;
  generation: number;
}

/** The answer to a publish: a session with the outputs to start, or the reason it is refused. */
export type IngestGrant =
  { granted: true; sessionId: string; streamId: string; outputs: OutputOrder[] } | { granted: false; reason: string };

export type OutputState = "starting" | "live" | "reconnecting" | "stopped" | "failed";

/** One destination to push a session to: its full URL and every secret the URL or its errors may carry. */
export interface OutputOrder {
  outputId: string;
  url: string;
  format: "flv" | "mpegts";
  secrets: string[];
}

/** A command and its `seq`, which the worker names as `afterSeq` once it carried it out. */
export type WorkerCommand = { seq: number } & (
  | { kind: "end_session"; sessionId: string; reason: string }
  | { kind: "start_output"; sessionId: string; output: OutputOrder }
  | { kind: "stop_output"; outputId: string }
);

export interface MediaInfo {
  videoCodec: string;
  width: number;
  height: number;
  fps: number;
  audioCodec: string;
}

/** Where viewers play a session, or `none` with the reason. */
export interface Playback {
  protocol: "flv" | "hls" | "none";
  url: string;
  reason?: string;
}

/** An output's health, from FFmpeg's progress. */
export interface OutputProgress {
  frames: number;
  fps: number;
  bitrateKbps: number;
  outTimeMs: number;
  speed: number;
}
