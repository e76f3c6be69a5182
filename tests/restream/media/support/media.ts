import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createLogger } from "../../../../services/kit/runtime/logger.js";
import type { ControlPlane } from "../../../../services/restream/media/control-plane.js";
import {
  MediaWorker,
  type MediaWorkerOptions,
  type RunningMediaWorker,
} from "../../../../services/restream/media/worker.js";
import { ffmpegVersion } from "../../../../services/tools/families/ffmpeg.js";
import { need } from "../../../support/skips.js";
import { accepts, freePorts } from "../../../support/ports.js";
import { until } from "../../../support/until.js";
import { watchdog } from "../../../support/timers.js";

/** Debian's FFmpeg (CI installs it: .ci/run); under CI=true a missing one fails these tests. */
export const FFMPEG = "/usr/bin/ffmpeg";
export const HAS_FFMPEG = need((await ffmpegVersion(FFMPEG)) !== undefined, `no ffmpeg and ffprobe at ${FFMPEG}`);

/** A key as the control plane would issue one (node-media-server takes letters, digits, `_` and `-` in a path). */
export function newKey(): string {
  return randomBytes(18).toString("base64url");
}

/** A running process and how it ended, once it has. */
export interface Running {
  readonly child: ChildProcess;
  /** Its exit code or signal once exited, else undefined. */
  exit(): string | undefined;
  stop(): Promise<void>;
}

function run(file: string, args: string[]): Running {
  const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"] });
  let ended: string | undefined;
  child.stderr?.resume();
  const closed = new Promise<void>((resolve) =>
    child.once("close", (code, signal) => {
      ended = signal ?? `code ${String(code)}`;
      resolve();
    }),
  );
  return {
    child,
    exit: () => ended,
    stop: async () => {
      if (ended === undefined) child.kill("SIGKILL");
      await closed;
    },
  };
}

/** An encoder publishing a test pattern with a tone (H.264 + AAC, a keyframe a second) to an RTMP URL. */
export function encoder(url: string): Running {
  return run(FFMPEG, [
    ...["-hide_banner", "-loglevel", "error", "-re"],
    ...["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine"],
    ...["-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "25", "-c:a", "aac"],
    ...["-f", "flv", url],
  ]);
}

/** A second node-media-server in its own process (its state is one per process), standing in for a destination. */
export interface Destination {
  /** Where an output pushes to: `rtmp://127.0.0.1:<port>/live/<key>`. */
  rtmpUrl(key: string): string;
  /** Its HTTP-FLV of what was pushed to `key`. */
  flvUrl(key: string): string;
  /** Kills it (the destination going away). */
  stop(): Promise<void>;
}

export async function destination(): Promise<Destination> {
  const [rtmp, http] = await freePorts(2);
  const store = await mkdtemp(join(tmpdir(), "nms-destination-"));
  const config = {
    bind: "127.0.0.1",
    rtmp: { port: rtmp },
    http: { port: http },
    store: { path: store },
    record: { auto: false },
    webadmin: { enable: false },
  };
  const server = run(process.execPath, [
    "-e",
    "const NodeMediaServer = require('node-media-server'); new NodeMediaServer(JSON.parse(process.argv[1])).run();",
    JSON.stringify(config),
  ]);
  await until(async () => server.exit() === undefined && (await accepts(`rtmp://127.0.0.1:${rtmp}`)));
  return {
    rtmpUrl: (key) => `rtmp://127.0.0.1:${rtmp}/live/${key}`,
    flvUrl: (key) => `http://127.0.0.1:${http}/live/${key}.flv`,
    stop: async () => {
      await server.stop();
      await rm(store, { recursive: true, force: true });
    },
  };
}

interface Stream {
  codec_type: string;
  codec_name: string;
  width?: number;
  height?: number;
}

/** The audio and video streams ffprobe finds at a URL (none when it cannot read it within 15 s). */
export async function probe(url: string): Promise<Stream[]> {
  const child = spawn(
    FFMPEG.replace(/ffmpeg$/, "ffprobe"),
    ["-v", "error", "-show_entries", "stream=codec_type,codec_name,width,height", "-of", "json", url],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const cancel = watchdog(15_000, () => child.kill("SIGKILL"));
  const code = await new Promise((resolve) => child.once("close", resolve));
  cancel();
  if (code !== 0) return [];
  const { streams = [] } = JSON.parse(out) as { streams?: Stream[] };
  return streams.filter((stream) => stream.codec_type === "audio" || stream.codec_type === "video");
}

/** The FFmpeg outputs (reading the session's FLV on stdin) this test process started and that still run. */
export async function outputProcesses(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(join("/proc", entry, "stat"), "utf8").catch(() => "");
    // pid (comm) state ppid …: a zombie not yet reaped counts too.
    const match = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (!match || match[1] !== "ffmpeg" || Number(match[2]) !== process.pid) continue;
    const args = await readFile(join("/proc", entry, "cmdline"), "utf8").catch(() => "");
    if (args.split("\0").includes("pipe:0")) found.push(Number(entry));
  }
  return found;
}

/** Starts a media worker on loopback against `control`, with quick restarts; the test stops it. */
export async function startWorker(
  control: ControlPlane,
  overrides: Partial<MediaWorkerOptions> = {},
): Promise<RunningMediaWorker> {
  return new MediaWorker({
    workerId: `wrk-${newKey()}`,
    control,
    rtmpPort: 0,
    bind: "127.0.0.1",
    ffmpegPath: FFMPEG,
    heartbeatMs: 200,
    backoff: { initialMs: 50, maxMs: 200, maxFailures: 3 },
    playback: "flv",
    logger: createLogger("silent"),
    ...overrides,
  }).start();
}
