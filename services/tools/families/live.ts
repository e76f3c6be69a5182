import sharp from "sharp";
import { getResolvedPDFJS } from "unpdf";
import { problem } from "../../kit/handler/problem.js";
import type { Catalogue } from "../catalogue/index.js";
import type { ToolDescriptor } from "../catalogue/descriptor.js";
import { probeBinaries } from "../domain/probes/binaries.js";
import type { ToolsSettings } from "../settings.js";
import { ffmpegVersion } from "./ffmpeg.js";

/** A tool's live status: `live`, or `unavailable` with the reason (FFmpeg is not installed). */
export interface ToolStatus {
  status: "live" | "unavailable";
  /** Why it does not run here, in words a caller reads (the registry's `status_reason`, the run's 503). */
  reason?: string;
  /** What the check met (an error's message), for the service's log only: never answered. */
  cause?: string;
}

export interface LiveStatus {
  of(tool: ToolDescriptor): ToolStatus;
}

/** A run of a tool that does not run here: 503 tools.tool.unavailable with the registry's reason. */
export function assertLive(live: LiveStatus, tool: ToolDescriptor): void {
  const { status, reason = "" } = live.of(tool);
  if (status === "live") return;
  throw problem(503, "tools.tool.unavailable", `The tool "${tool.id}" does not run here now. ${reason}`, {
    tool: tool.id,
    reason,
  });
}

/** What a check found wrong: the public reason and its cause; undefined when the family runs here. */
type Fault = { reason: string; cause: string } | undefined;

/**
 * Asks, once at start, what runs each family here, and answers each tool's status from it: img (sharp makes
 * an image: libvips works, not only loads), audio (FFmpeg and ffprobe answer `-version`), docs (pdf.js, which
 * unpdf loads only when first asked, loads), net.ping and net.traceroute (their program is installed and is
 * the one they read). Other inline tools run in this process and are live; so is a tool without an API, which
 * nothing here runs (a page does). Only the checks some available tool needs are made.
 */
export async function liveStatus(settings: ToolsSettings, catalogue: Catalogue): Promise<LiveStatus> {
  // Both binary probes are answered by one look at the programs.
  const binaries = once(probeBinaries);
  const checks: Record<string, () => Promise<Fault>> = {
    img: () =>
      works(
        () =>
          sharp({ create: { width: 1, height: 1, channels: 3, background: "#000" } })
            .png()
            .toBuffer(),
        "Images cannot be processed here: the image library (libvips) does not work.",
      ),
    audio: async () =>
      (await ffmpegVersion(settings.ffmpeg)) === undefined
        ? {
            reason: "Audio cannot be processed here: FFmpeg is not installed.",
            cause: `${settings.ffmpeg} and the ffprobe beside it do not both answer -version as FFmpeg's`,
          }
        : undefined,
    docs: () => works(getResolvedPDFJS, "PDF documents cannot be read here: the PDF library (pdf.js) does not load."),
    "net.ping": async () => ((await binaries())["net.ping"] ? undefined : missing("ping")),
    "net.traceroute": async () => ((await binaries())["net.traceroute"] ? undefined : missing("traceroute")),
  };
  /** The check a tool depends on: its own (a binary probe) or its family's; none for a tool without an API. */
  const checkOf = (tool: ToolDescriptor) => (!tool.api ? undefined : tool.id in checks ? tool.id : tool.family);
  const needed = new Set(catalogue.tools.filter((tool) => tool.catalogue === "available").map(checkOf));
  const faults = new Map<string, Fault>();
  await Promise.all(
    Object.entries(checks)
      .filter(([key]) => needed.has(key))
      .map(async ([key, check]) => faults.set(key, await check())),
  );
  return {
    of(tool) {
      const key = checkOf(tool);
      const fault = key === undefined ? undefined : faults.get(key);
      return fault ? { status: "unavailable", ...fault } : { status: "live" };
    },
  };
}

/** Whether a library does what the family needs of it. */
async function works(task: () => Promise<unknown>, reason: string): Promise<Fault> {
  try {
    await task();
    return undefined;
  } catch (error) {
    return { reason, cause: (error as Error).message };
  }
}

/** A probe's program that is absent here, or another program than the one whose output the probe reads. */
const missing = (program: string): Fault => ({
  reason: `The ${program} program is not installed here.`,
  cause: `${program} is not on the PATH or does not answer -V as the probe expects`,
});

/** A question asked once, however many ask it. */
function once<T>(ask: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () => (answer ??= ask());
}
