import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import type { ToolsContext } from "../../services/tools/context.js";
import { BOUNDARY, multipart, type Part } from "../media/support.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";
import { holdRows } from "../support/row-lock.js";
import { openEventStream, type Opened } from "../support/sse.js";
import { until } from "../support/until.js";

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let n = 0;
/** A fresh person, so each test's jobs and quota are its own. */
export const person = () => `usr_jobs${Date.now().toString(36)}${(n++).toString(36)}`;

export const toolsOf = (t: TestPlatform) => t.platform.contexts.get("tools") as ToolsContext;

/** A `width` × `height` PNG with a gradient (sharp). */
export async function png(width = 64, height = 48): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) pixels.set([(x * 255) / width, 0, (y * 255) / height], (y * width + x) * 3);
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/**
 * `seconds` of a 440 Hz sine at 8 kHz, made by FFmpeg, as WAV or FLAC (half an hour of FLAC is 7 MB, and takes
 * FFmpeg many seconds to transcode to stereo MP3 at 48 kHz: a job that is still running when a test acts on it).
 */
export async function sine(seconds: number, format: "wav" | "flac" = "wav"): Promise<Buffer> {
  const source = `sine=frequency=440:duration=${seconds}:sample_rate=8000`;
  // Written to a file, not a pipe: FFmpeg then writes the length in the header, so a job knows its duration.
  const dir = await mkdtemp(join(tmpdir(), "pf-tools-sine-"));
  try {
    const path = join(dir, `sine.${format}`);
    await promisify(execFile)("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", source, "-y", path]);
    return await readFile(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One input file of a multipart creation. */
export interface Upload {
  name: string;
  type: string;
  data: Buffer;
}

/** POST /tools/api/v1/jobs as a form: `tool`, `input` (JSON text), then each file part. */
export async function createWithFiles(
  gatewayUrl: string,
  token: string,
  tool: string,
  input: unknown,
  files: Upload[],
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const parts: Part[] = [
    { name: "tool", data: tool },
    { name: "input", data: JSON.stringify(input) },
    ...files.map((file) => ({ name: "file", filename: file.name, type: file.type, data: file.data })),
  ];
  const response = await fetch(`${gatewayUrl}/tools/api/v1/jobs`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
      ...headers,
    },
    body: multipart(parts),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
}

/** A tools route of the gateway as `token`. */
export function toolsCall(t: Pick<TestPlatform, "http">, token: string) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.http(method, `/tools/api/v1${path}`, { token, body, headers });
}

/** Waits until the job is in one of `states` (read through the gateway as its owner); answers it. */
export async function untilJob(
  t: Pick<TestPlatform, "http">,
  token: string,
  id: string,
  states: string[],
  timeoutMs = 30_000,
): Promise<any> {
  let job: any;
  await until(async () => {
    const answer = await t.http("GET", `/tools/api/v1/jobs/${id}`, { token });
    job = answer.body?.job;
    return states.includes(job?.state);
  }, timeoutMs);
  return job;
}

/** Opens a job's event stream through the gateway. */
export function watch(
  gatewayUrl: string,
  token: string,
  id: string,
  headers: Record<string, string> = {},
): Promise<Opened> {
  return openEventStream(`${gatewayUrl}/tools/api/v1/jobs/${id}/events`, {
    authorization: `Bearer ${token}`,
    ...headers,
  });
}

/** GETs a result file's bytes through the gateway. */
export async function fileBytes(
  gatewayUrl: string,
  token: string,
  id: string,
  n: number,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${gatewayUrl}/tools/api/v1/jobs/${id}/files/${n}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
  });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** The ids of the processes `parent` started whose command is `name` (read from /proc: Linux). */
export async function childProcesses(parent: number, name: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid …: the command may hold spaces and parentheses, so read from the last ")".
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    if (comm === name && ppid === parent) found.push(Number(entry));
  }
  return found;
}

/** A session holding one job's row locked (FOR UPDATE), so whatever else needs the row waits until `release()`. */
export const holdJob = (databaseUrl: string, id: string) =>
  holdRows(databaseUrl, "select 1 from tools.jobs where id = $1 for update", [id]);
