import { createHash } from "node:crypto";
import { open } from "node:fs/promises";
import { join } from "node:path";
import type { JobInput } from "../gen/pf/bot/v1/jobs_pb.js";

/** Why an input stopped a job before it started. */
export type InputFault =
  /** Its bytes are not the ones the job pinned (size, sha256, or no object at its key). */
  | { mismatch: string }
  /** Media could not be read (a network failure, a 5xx). */
  | { unavailable: string };

/**
 * Fetches each input from media (`<media_url>/f/<key>`, no credential sent) into `dir` under its name, checking
 * its size while it streams (never more than the pinned size is read) and its sha256 at the end, all before the job
 * starts. The first fault ends the fetching; an abort (the job cancelled, its ttl out) rejects.
 */
export async function fetchInputs(
  mediaUrl: string,
  inputs: readonly JobInput[],
  dir: string,
  signal: AbortSignal,
): Promise<InputFault | undefined> {
  const base = mediaUrl.endsWith("/") ? mediaUrl : `${mediaUrl}/`;
  for (const input of inputs) {
    const fault = await fetchInput(new URL(`f/${encodeURIComponent(input.mediaKey)}`, base), input, dir, signal);
    if (fault) return fault;
  }
  return undefined;
}

async function fetchInput(url: URL, input: JobInput, dir: string, signal: AbortSignal) {
  const name = JSON.stringify(input.name);
  const size = Number(input.size);
  let response: Response;
  try {
    response = await fetch(url, { signal });
  } catch (error) {
    if (signal.aborted) throw error;
    return { unavailable: `input ${name} could not be read from media: ${(error as Error).message}` };
  }
  if (response.status === 404 || response.status === 410) {
    await response.body?.cancel();
    return { mismatch: `input ${name}: media holds no object at its key` };
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    return { unavailable: `input ${name}: media answered ${response.status}` };
  }
  const declared = response.headers.get("content-length");
  if (declared !== null && Number(declared) !== size) {
    await response.body.cancel();
    return { mismatch: `input ${name} is ${declared} bytes, not ${size}` };
  }
  const hash = createHash("sha256");
  let read = 0;
  const file = await open(join(dir, input.name), "wx", 0o644);
  try {
    for await (const chunk of response.body) {
      read += chunk.length;
      if (read > size) return { mismatch: `input ${name} is longer than ${size} bytes` };
      hash.update(chunk);
      await file.write(chunk);
    }
  } finally {
    await file.close();
  }
  if (read !== size) return { mismatch: `input ${name} is ${read} bytes, not ${size}` };
  const digest = hash.digest("hex");
  if (digest !== input.sha256)
    return { mismatch: `input ${name} has sha256 ${digest}, not the pinned ${input.sha256}` };
  return undefined;
}
