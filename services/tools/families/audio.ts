import { stat, symlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { AUDIO_LIMITS } from "../catalogue/files.js";
import { PROGRESS_STEP, RunStop, theInputFile } from "./job-input.js";
import { ffprobeOf } from "./ffmpeg.js";
import { runProgram, type ProgramRun } from "./program.js";
import { ToolFailure, type JobWork } from "./tool.js";

export type AudioFormat = "mp3" | "ogg" | "wav" | "flac" | "aac";

/** The input audio.process takes (valid against its schema already). */
export interface AudioRequest {
  format: AudioFormat;
  bitrate_kbps?: number;
  sample_rate?: number;
  channels?: number;
  start_seconds?: number;
  duration_seconds?: number;
}

/** How each output format is written: FFmpeg's encoder and muxer, whether a bitrate applies, its media type. */
const ENCODINGS: Record<AudioFormat, { codec: string; muxer: string; lossy: boolean; contentType: string }> = {
  mp3: { codec: "libmp3lame", muxer: "mp3", lossy: true, contentType: "audio/mpeg" },
  ogg: { codec: "libvorbis", muxer: "ogg", lossy: true, contentType: "audio/ogg" },
  wav: { codec: "pcm_s16le", muxer: "wav", lossy: false, contentType: "audio/wav" },
  flac: { codec: "flac", muxer: "flac", lossy: false, contentType: "audio/flac" },
  aac: { codec: "aac", muxer: "adts", lossy: true, contentType: "audio/aac" },
};

/**
 * The only demuxers FFmpeg may open an input with (-format_whitelist; `mov` covers M4A and MP4, `matroska` WebM):
 * never a playlist (HLS, concat), image or text format that would read other files or guess at arbitrary bytes.
 */
export const INPUT_DEMUXERS = ["mp3", "ogg", "wav", "flac", "aac", "mov", "matroska", "aiff"];

/** What both FFmpeg programs are told before the input: files only, through the listed demuxers. */
const INPUT_GUARD = ["-protocol_whitelist", "file", "-format_whitelist", INPUT_DEMUXERS.join(",")];

/** Seconds as FFmpeg reads them: fixed-point, never an exponent, refusing what is not a finite number ≥ 0. */
function seconds(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new ToolFailure("tools.input.invalid", "A time must be 0 or more.");
  return value.toFixed(3);
}

/** A whole number among the allowed ones, as an argument (numbers and enums are all a caller can put there). */
function whole(value: number, allowed: (value: number) => boolean, what: string): string {
  if (!Number.isInteger(value) || !allowed(value))
    throw new ToolFailure("tools.input.invalid", `${what} is out of range.`);
  return String(value);
}

/** ffprobe's arguments: the input's container and streams as JSON. */
export function probeArgs(input: string): string[] {
  return [
    "-v",
    "error",
    ...INPUT_GUARD,
    "-show_entries",
    "format=format_name,duration:stream=codec_type",
    "-of",
    "json",
    `file:${input}`,
  ];
}

/**
 * FFmpeg's arguments for a transcode: a fixed list in which only validated numbers and enum values of the request
 * stand, never its text; paths are the run's own and go behind `file:` (never read as another protocol or option).
 * The first audio stream only, metadata dropped, the result bounded by `-fs`, progress as key=value on stdout.
 */
export function transcodeArgs(input: string, output: string, request: AudioRequest, maxOutputBytes: number): string[] {
  if (!Object.hasOwn(ENCODINGS, request.format))
    throw new ToolFailure("tools.input.invalid", "The output format is not one audio.process writes.");
  const encoding = ENCODINGS[request.format];
  const args = ["-nostdin", "-hide_banner", "-loglevel", "error", "-nostats", "-progress", "pipe:1", ...INPUT_GUARD];
  if (request.start_seconds !== undefined) args.push("-ss", seconds(request.start_seconds));
  if (request.duration_seconds !== undefined) args.push("-t", seconds(request.duration_seconds));
  args.push("-i", `file:${input}`, "-map", "0:a:0", "-vn", "-sn", "-dn", "-map_metadata", "-1", "-c:a", encoding.codec);
  if (encoding.lossy && request.bitrate_kbps !== undefined) {
    args.push("-b:a", `${whole(request.bitrate_kbps, (kbps) => kbps >= 32 && kbps <= 320, "The bitrate")}k`);
  }
  if (request.sample_rate !== undefined) {
    args.push(
      "-ar",
      whole(request.sample_rate, (hz) => hz >= 8000 && hz <= 48000, "The sample rate"),
    );
  }
  if (request.channels !== undefined)
    args.push(
      "-ac",
      whole(request.channels, (n) => n === 1 || n === 2, "Channels"),
    );
  args.push("-fs", String(maxOutputBytes), "-f", encoding.muxer, "-y", `file:${output}`);
  return args;
}

/**
 * Reads `-progress pipe:1` output: key=value lines in blocks, each ended by `progress=continue|end`. Gives the
 * position (seconds of output written) at the end of each block.
 */
export class FfmpegProgress {
  private rest = "";
  private position: number | undefined;

  /** The positions of the blocks this chunk completed. */
  push(chunk: string): number[] {
    const lines = (this.rest + chunk).split("\n");
    this.rest = lines.pop() ?? "";
    const positions: number[] = [];
    for (const line of lines) {
      const [key, value] = line.trim().split("=", 2);
      if (key === "out_time_us" && /^\d+$/.test(value)) this.position = Number(value) / 1_000_000;
      if (key === "progress" && this.position !== undefined) positions.push(this.position);
    }
    return positions;
  }
}

interface Probe {
  format: string;
  /** Undefined when the container does not say. */
  duration?: number;
}

/** FFmpeg or ffprobe, stopped (SIGKILL) when `signal` aborts: a stopped run fails with why it stopped. */
async function run(binary: string, args: string[], signal: AbortSignal, onStdout?: (chunk: string) => void) {
  const missing = () => new ToolFailure("tools.tool.unavailable", `${basename(binary)} does not run here.`);
  const ran = await runProgram(binary, args, { signal, onStdout, missing });
  if (!ran.finished) throw signal.reason as Error;
  return ran;
}

/** FFmpeg's last error line, with the run's own paths left out. */
function lastWords(stderr: string, paths: string[]): string {
  const line = stderr.trim().split("\n").pop()?.trim() ?? "";
  return paths.reduce((text, path) => text.replaceAll(path, "the file"), line).slice(0, 300);
}

/** The input's container and duration, or tools.file.unreadable for anything that is not audio FFmpeg reads. */
async function probe(ffprobe: string, path: string, signal: AbortSignal): Promise<Probe> {
  const ran = await run(ffprobe, probeArgs(path), signal);
  let found: { format?: { format_name?: string; duration?: string }; streams?: { codec_type?: string }[] } = {};
  if (ran.code === 0) {
    try {
      found = JSON.parse(ran.stdout) as typeof found;
    } catch {
      // Left empty: refused below.
    }
  }
  const format = found.format?.format_name;
  if (format === undefined || !found.streams?.some((stream) => stream.codec_type === "audio")) {
    throw new ToolFailure(
      "tools.file.unreadable",
      "The file is not audio FFmpeg reads here (MP3, Ogg, WAV, FLAC, AAC, M4A, WebM or Matroska, AIFF).",
    );
  }
  const duration = Number(found.format?.duration);
  return { format, duration: Number.isFinite(duration) && duration >= 0 ? duration : undefined };
}

/**
 * audio.process: the input is probed first (a shell script named .mp3 is tools.file.unreadable, never handed to a
 * decoder as audio), then transcoded by FFmpeg with progress from `-progress pipe:1`, killed when the run stops.
 */
export async function processAudio(work: JobWork, ffmpeg: string) {
  const stop = new RunStop(work, AUDIO_LIMITS.timeoutMs);
  const request = work.input as unknown as AudioRequest;
  const file = theInputFile(work);
  await work.progress(0, "Probing the audio");
  // FFmpeg guesses a format from a name's extension too: it reads the bytes through a link without one.
  const input = join(work.workDir, "input");
  await symlink(file.path, input);
  const probed = (path: string) =>
    probe(ffprobeOf(ffmpeg), path, stop.signal).catch((error: unknown) => {
      throw stop.reason ?? error;
    });
  const found = await probed(input);
  if (found.duration !== undefined && found.duration > AUDIO_LIMITS.maxDurationSeconds) {
    throw new ToolFailure(
      "tools.file.refused",
      `The audio lasts ${Math.round(found.duration)} s; audio.process takes at most ${AUDIO_LIMITS.maxDurationSeconds} s.`,
    );
  }
  const start = request.start_seconds ?? 0;
  if (found.duration !== undefined && start >= found.duration) {
    throw new ToolFailure(
      "tools.input.invalid",
      `start_seconds ${start} is past the end of the audio (${found.duration.toFixed(1)} s).`,
    );
  }
  const expected = Math.min((found.duration ?? Infinity) - start, request.duration_seconds ?? Infinity);

  await work.progress(5, "Transcoding");
  const name = `audio.${request.format}`;
  const output = join(work.workDir, name);
  const progress = new FfmpegProgress();
  let reported = 5;
  let reports: Promise<void> = Promise.resolve();
  const args = transcodeArgs(input, output, request, AUDIO_LIMITS.maxOutputBytes);
  const onProgress = (chunk: string) => {
    for (const position of progress.push(chunk)) {
      const done = Number.isFinite(expected) && expected > 0 ? Math.min(1, position / expected) : 0;
      const percent = Math.floor(5 + 90 * done);
      if (percent - reported < PROGRESS_STEP) continue;
      reported = percent;
      reports = reports.then(() => work.progress(percent, `Transcoded ${position.toFixed(1)} s`));
    }
  };
  let ran: ProgramRun;
  try {
    ran = await run(ffmpeg, args, stop.signal, onProgress);
  } catch (error) {
    // Why the run stopped is what it failed with, not a progress note that could not be written meanwhile.
    void reports.catch(() => undefined);
    throw stop.reason ?? error;
  }
  await reports;
  stop.check();
  if (ran.code !== 0) {
    const words = lastWords(ran.stderr, [input, output, file.path]);
    throw new ToolFailure("tools.file.unreadable", `FFmpeg could not transcode the audio${words ? `: ${words}` : "."}`);
  }
  const { size } = await stat(output);
  if (size >= AUDIO_LIMITS.maxOutputBytes) {
    throw new ToolFailure(
      "tools.file.refused",
      `The result would be larger than ${AUDIO_LIMITS.maxOutputBytes / 1024 ** 2} MiB; ask for a shorter part or a compressed format.`,
    );
  }
  const result = await probed(output);
  await work.progress(100, "Done");
  return {
    output: { duration_seconds: Math.round((result.duration ?? 0) * 1000) / 1000, format: request.format, size },
    files: [{ name, contentType: ENCODINGS[request.format].contentType, path: output }],
  };
}
