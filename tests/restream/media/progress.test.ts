import { describe, expect, it } from "vitest";
import { progressOf, ProgressReader } from "../../../services/restream/media/progress.js";

/** A block as FFmpeg 5.1 writes it with `-c copy` (one video stream). */
const BLOCK = [
  "frame=125",
  "fps=25.02",
  "stream_0_0_q=-1.0",
  "bitrate= 512.3kbits/s",
  "total_size=320512",
  "out_time_us=5000000",
  "out_time_ms=5000000",
  "out_time=00:00:05.000000",
  "dup_frames=0",
  "drop_frames=0",
  "speed=1.01x",
  "progress=continue",
  "",
].join("\n");

describe("FFmpeg progress (pure)", () => {
  it("reads a block into the output's health", () => {
    expect(new ProgressReader().push(BLOCK)).toEqual([
      { frames: 125, fps: 25.02, bitrateKbps: 512.3, outTimeMs: 5000, speed: 1.01 },
    ]);
  });

  it("joins lines split across chunks and returns each block once it is closed", () => {
    const reader = new ProgressReader();
    const cut = BLOCK.indexOf("kbits");
    expect(reader.push(BLOCK.slice(0, cut))).toEqual([]);
    expect(reader.push(BLOCK.slice(cut, -5))).toEqual([]);
    const [health] = reader.push(BLOCK.slice(-5) + BLOCK.replace("frame=125", "frame=150"));
    expect(health.bitrateKbps).toBe(512.3);
    expect(reader.push("")).toEqual([]);
  });

  it("returns every block a chunk closes, in order, the last one `progress=end`", () => {
    const ended = BLOCK.replace("frame=125", "frame=130").replace("progress=continue", "progress=end");
    expect(new ProgressReader().push(BLOCK + ended).map((health) => health.frames)).toEqual([125, 130]);
  });

  it("reads N/A and missing values as 0, and out_time_ms as the microseconds it holds", () => {
    const early = new Map([
      ["frame", "0"],
      ["fps", "0.00"],
      ["bitrate", "N/A"],
      ["out_time_ms", "1500000"],
      ["speed", "N/A"],
    ]);
    expect(progressOf(early)).toEqual({ frames: 0, fps: 0, bitrateKbps: 0, outTimeMs: 1500, speed: 0 });
    expect(progressOf(new Map())).toEqual({ frames: 0, fps: 0, bitrateKbps: 0, outTimeMs: 0, speed: 0 });
    expect(progressOf(new Map([["out_time_us", "-9223372036854775807"]])).outTimeMs).toBe(0);
  });

  it("ignores lines that are no key=value pair", () => {
    expect(new ProgressReader().push(`garbage\n${BLOCK}`)).toHaveLength(1);
  });
});
