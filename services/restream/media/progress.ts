import type { OutputProgress } from "./control-plane.js";

/**
 * Reads FFmpeg's `-progress pipe:1` output: blocks of `key=value` lines, each closed by `progress=continue` (or
 * `progress=end` when FFmpeg finishes). Chunks may split lines anywhere; `push` returns the blocks a chunk completed.
 */
export class ProgressReader {
  private pending = "";
  private block = new Map<string, string>();

  /** The progress of every block this chunk closed, oldest first. */
  push(chunk: string): OutputProgress[] {
    const lines = (this.pending + chunk).split("\n");
    this.pending = lines.pop() ?? "";
    const done: OutputProgress[] = [];
    for (const line of lines) {
      const at = line.indexOf("=");
      if (at < 0) continue;
      const key = line.slice(0, at).trim();
      const value = line.slice(at + 1).trim();
      if (key === "progress") {
        done.push(progressOf(this.block));
        this.block = new Map();
      } else {
        this.block.set(key, value);
      }
    }
    return done;
  }
}

/**
 * One block's health. FFmpeg writes `N/A` for what it does not know yet (0 here), the bitrate as `512.3kbits/s`,
 * the speed as `1.01x`, and, despite its name, `out_time_ms` in microseconds (as `out_time_us`).
 */
export function progressOf(block: ReadonlyMap<string, string>): OutputProgress {
  const outTimeUs = numberOf(block.get("out_time_us") ?? block.get("out_time_ms"));
  return {
    frames: Math.trunc(numberOf(block.get("frame"))),
    fps: numberOf(block.get("fps")),
    bitrateKbps: numberOf(block.get("bitrate")?.replace(/kbits\/s$/, "")),
    outTimeMs: Math.max(0, Math.round(outTimeUs / 1000)),
    speed: numberOf(block.get("speed")?.replace(/x$/, "")),
  };
}

function numberOf(text: string | undefined): number {
  const value = Number(text);
  return text === undefined || text === "" || !Number.isFinite(value) ? 0 : value;
}
