import { hostname } from "node:os";
import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The restream service's own settings, read once from the environment (documented in README.md). */
export interface RestreamSettings {
  /** Run the embedded media worker in this process (PF_RESTREAM_EMBEDDED_WORKER, `on` by default; `off` when real media servers speak the worker API). */
  embeddedWorker: boolean;
  /** The embedded worker's id (PF_RESTREAM_WORKER_ID, default `embedded-<hostname>`). */
  workerId: string;
  /** Where the embedded RTMP ingest listens (PF_RESTREAM_RTMP_BIND, default 127.0.0.1; PF_RESTREAM_RTMP_PORT, default 1935, 0 picks a free one). */
  rtmpBind: string;
  rtmpPort: number;
  /** The embedded worker's HTTP-FLV playback port (PF_RESTREAM_PLAYBACK_PORT, default 8935; 0 picks a free one; `off` serves none). */
  playbackPort: number | "off";
  /** The ingest URL streamers are shown, the key appended (PF_RESTREAM_PUBLIC_INGEST_URL; default the embedded worker's own). */
  publicIngestUrl: string;
  /** The FFmpeg that pushes outputs (PF_RESTREAM_FFMPEG, default `ffmpeg` on PATH). */
  ffmpegPath: string;
  /** How often a worker beats its heart (PF_RESTREAM_HEARTBEAT_MS, default 2000). */
  heartbeatMs: number;
  /** A worker silent this long is lost and its sessions interrupted (PF_RESTREAM_WORKER_LOST_MS, default 10000). */
  workerLostMs: number;
  /** How many log lines each output keeps (PF_RESTREAM_LOG_LINES, default 500). */
  logLines: number;
  /** How long a destination test may take to connect (PF_RESTREAM_TEST_TIMEOUT_MS, default 5000). */
  testTimeoutMs: number;
  /** How many times an output is restarted before it fails (PF_RESTREAM_OUTPUT_RESTARTS, default 5), the first after PF_RESTREAM_BACKOFF_MS (500), doubling up to 10 s. */
  outputRestarts: number;
  backoffMs: number;
}

export function restreamSettings(config: Config): RestreamSettings {
  const env = config.env;
  const embedded = (env.PF_RESTREAM_EMBEDDED_WORKER ?? "on").trim().toLowerCase();
  if (embedded !== "on" && embedded !== "off")
    throw new Error(`PF_RESTREAM_EMBEDDED_WORKER must be on or off, got "${embedded}"`);
  const rtmpBind = (env.PF_RESTREAM_RTMP_BIND ?? "127.0.0.1").trim();
  const rtmpPort = wholeSetting(env, "PF_RESTREAM_RTMP_PORT", 1935, 0);
  const playback = (env.PF_RESTREAM_PLAYBACK_PORT ?? "").trim().toLowerCase();
  const playbackPort = playback === "off" ? "off" : wholeSetting(env, "PF_RESTREAM_PLAYBACK_PORT", 8935, 0);
  const workerId = (env.PF_RESTREAM_WORKER_ID ?? `embedded-${hostname()}`).trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(workerId))
    throw new Error(`PF_RESTREAM_WORKER_ID "${workerId}" must be 1 to 64 letters, digits, '.', '_' or '-'`);
  return {
    embeddedWorker: embedded === "on",
    workerId,
    rtmpBind,
    rtmpPort,
    playbackPort,
    publicIngestUrl: (env.PF_RESTREAM_PUBLIC_INGEST_URL ?? "").trim(),
    ffmpegPath: (env.PF_RESTREAM_FFMPEG ?? "ffmpeg").trim(),
    heartbeatMs: wholeSetting(env, "PF_RESTREAM_HEARTBEAT_MS", 2_000, 50),
    workerLostMs: wholeSetting(env, "PF_RESTREAM_WORKER_LOST_MS", 10_000, 100),
    logLines: wholeSetting(env, "PF_RESTREAM_LOG_LINES", 500, 1),
    testTimeoutMs: wholeSetting(env, "PF_RESTREAM_TEST_TIMEOUT_MS", 5_000, 1),
    outputRestarts: wholeSetting(env, "PF_RESTREAM_OUTPUT_RESTARTS", 5, 0),
    backoffMs: wholeSetting(env, "PF_RESTREAM_BACKOFF_MS", 500, 1),
  };
}
