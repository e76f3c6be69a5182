import { describe, expect, it } from "vitest";
import { mediaInfoOf } from "../../../services/restream/media/media-info.js";
import { ffmpegArguments, restartDelay } from "../../../services/restream/media/outputs.js";

const fourCC = (text: string) => Buffer.from(text, "latin1").readUInt32BE();

describe("a session's media info (pure)", () => {
  it("names FLV's codec ids and enhanced RTMP's FourCCs", () => {
    expect(mediaInfoOf({ videoCodecId: 7, audioCodecId: 10, width: 1280, height: 720, fps: 29.97 })).toEqual({
      videoCodec: "h264",
      width: 1280,
      height: 720,
      fps: 29.97,
      audioCodec: "aac",
    });
    expect(mediaInfoOf({ videoCodecId: fourCC("hvc1"), audioCodecId: fourCC("Opus") })).toMatchObject({
      videoCodec: "hevc",
      audioCodec: "opus",
    });
  });

  it("says none for an absent track, unknown for an id it does not name, 0 for what metadata did not say", () => {
    expect(mediaInfoOf({ audioCodecId: 99 })).toEqual({
      videoCodec: "none",
      width: 0,
      height: 0,
      fps: 0,
      audioCodec: "unknown",
    });
    expect(mediaInfoOf({ width: Number.NaN, height: -1, fps: Infinity })).toMatchObject({
      width: 0,
      height: 0,
      fps: 0,
    });
  });
});

describe("an output's restarts and FFmpeg arguments (pure)", () => {
  it("waits exponentially longer before each restart, up to the cap", () => {
    const backoff = { initialMs: 500, maxMs: 10_000, maxFailures: 5 };
    expect([1, 2, 3, 4, 5, 6, 7].map((failures) => restartDelay(failures, backoff))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it("copies the session's FLV from stdin: flv for rtmp and rtmps, mpegts for srt, the URL last", () => {
    const flv = ffmpegArguments({ outputId: "out_a", url: "rtmps://live.example/app/k", format: "flv", secrets: [] });
    expect(flv.slice(flv.indexOf("-i"), flv.indexOf("-i") + 4)).toEqual(["-i", "pipe:0", "-c", "copy"]);
    expect(flv.slice(-3)).toEqual(["-f", "flv", "rtmps://live.example/app/k"]);
    const srt = ffmpegArguments({ outputId: "out_b", url: "srt://srt.example:9000", format: "mpegts", secrets: [] });
    expect(srt.slice(-3)).toEqual(["-f", "mpegts", "srt://srt.example:9000"]);
    expect(srt).not.toContain("-flvflags");
    expect(flv).toContain("pipe:1");
  });
});
