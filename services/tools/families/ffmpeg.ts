import { basename, dirname, join } from "node:path";
import { runProgram } from "./program.js";

/** The ffprobe beside an FFmpeg binary (Debian's ffmpeg package ships both): `/usr/bin/ffmpeg` → `/usr/bin/ffprobe`. */
export function ffprobeOf(ffmpeg: string): string {
  const name = basename(ffmpeg).replace(/ffmpeg(?!.*ffmpeg)/, "ffprobe");
  return ffmpeg.includes("/") ? join(dirname(ffmpeg), name) : name;
}

/**
 * The FFmpeg version this binary reports, or undefined when it (or the ffprobe beside it, which audio.process
 * also runs) does not answer `-version` as FFmpeg within a few seconds: whether audio.process runs here.
 */
export async function ffmpegVersion(binary: string): Promise<string | undefined> {
  try {
    const signal = AbortSignal.timeout(5_000);
    const missing = () => new Error("not installed");
    const [ffmpeg, ffprobe] = await Promise.all([
      runProgram(binary, ["-version"], { signal, missing }),
      runProgram(ffprobeOf(binary), ["-version"], { signal, missing }),
    ]);
    const version = /^ffmpeg version (\S+)/.exec(ffmpeg.stdout)?.[1];
    return ffmpeg.code === 0 && ffprobe.code === 0 && ffprobe.stdout.startsWith("ffprobe version")
      ? version
      : undefined;
  } catch {
    return undefined;
  }
}
