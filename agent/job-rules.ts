import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { JobFrame, JobInput, JobLimits } from "../gen/pf/bot/v1/jobs_pb.js";
import { artifactKey, type Artifact, type Catalogue } from "./catalogue/catalogue.js";

/** Limits in numbers (the frame's are int64). */
export interface Limits {
  memoryBytes: number;
  outputBytes: number;
  cpuMs: number;
}

/** What this device enforces at most, advertised in `hello` and merged with each job's. */
export interface OwnCaps {
  maxTtlMs: number;
  limits: Limits;
  /** Jobs run at once; more wait (their ttl running). */
  slots: number;
}

/** A job this device will run, as it will run it. */
export interface JobPlan {
  artifact: Artifact;
  /** The args as canonical JSON (keys sorted), the run's stdin. */
  stdin: Uint8Array;
  ttlMs: number;
  limits: Limits;
  inputs: JobInput[];
}

/** Why the device refuses a job (exit `refused`), and the limit at stake if one is. */
export interface Refusal {
  refused: string;
  limit?: string;
}

/** The stricter of the job's ttl and the device's maximum (an unset ttl is the device's). */
export function stricterTtl(askedMs: bigint, maxTtlMs: number): number {
  return askedMs > 0n ? Math.min(Number(askedMs), maxTtlMs) : maxTtlMs;
}

/** Each limit the stricter of the job's and the device's own; one the job leaves unset (0) is the device's. */
export function stricterLimits(asked: JobLimits | undefined, own: Limits): Limits {
  const pick = (value: bigint | undefined, mine: number) =>
    value && value > 0n ? Math.min(Number(value), mine) : mine;
  return {
    memoryBytes: pick(asked?.memoryBytes, own.memoryBytes),
    outputBytes: pick(asked?.outputBytes, own.outputBytes),
    cpuMs: pick(asked?.cpuMs, own.cpuMs),
  };
}

/** JSON with every object's keys sorted: the same args always reach a run as the same bytes. */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

const UNSAFE_NAME = /[/\\\0]/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * What is wrong with a job's inputs, if anything: names unique, neither `.` nor `..`, with no path separator or NUL
 * and at most 255 bytes; each pinned by a sha256 and a size; a media key, never a URL.
 */
export function inputFault(inputs: readonly JobInput[]): string | undefined {
  const names = new Set<string>();
  for (const input of inputs) {
    const name = JSON.stringify(input.name);
    if (!input.name || input.name === "." || input.name === ".." || UNSAFE_NAME.test(input.name))
      return `input ${name} is not a plain file name`;
    if (Buffer.byteLength(input.name) > 255) return `input ${name} has a name longer than 255 bytes`;
    if (names.has(input.name)) return `input ${name} is named twice`;
    names.add(input.name);
    if (!SHA256.test(input.sha256)) return `input ${name} is not pinned by a sha256`;
    if (input.size < 0n) return `input ${name} has a negative size`;
    if (!input.mediaKey || input.mediaKey.includes(":"))
      return `input ${name} has no media key, or a URL where its key belongs`;
  }
  return undefined;
}

/**
 * Checks a job frame against what this device holds and can enforce, and merges its ttl and limits stricter with
 * the device's own. `code` says whether the host can run the `code` class (and why not). Net is never refused for
 * what it asks: absent and `none` are deny, and a stricter device runs `public` or `platform` jobs with deny, which
 * both classes enforce (a function has no socket at all; code runs in an empty network namespace).
 */
export function planJob(
  frame: JobFrame | undefined,
  catalogue: Catalogue,
  caps: OwnCaps,
  code: { available: true } | { available: false; why: string },
): JobPlan | Refusal {
  if (!frame) return { refused: "the job frame is missing" };
  if (frame.class !== "function" && frame.class !== "code")
    return { refused: `class ${JSON.stringify(frame.class)} is not one this device runs` };
  if (frame.class === "code" && !code.available)
    return { refused: `class code needs its network denied, which this host cannot enforce: ${code.why}` };
  const artifact = catalogue.get(artifactKey(frame.class, frame.artifact));
  if (!artifact)
    return { refused: `artifact ${JSON.stringify(frame.artifact)} of class ${frame.class} is not held by this device` };
  const args = frame.args ? toJson(ValueSchema, frame.args) : undefined;
  if (args === undefined) return { refused: "the job has no args" };
  const [fault] = artifact.check(args);
  if (fault)
    return { refused: `args do not match ${artifact.name}'s declared input: ${fault.pointer || "/"} ${fault.message}` };
  const badInput = inputFault(frame.inputs);
  if (badInput) return { refused: badInput };
  const limits = stricterLimits(frame.limits, caps.limits);
  if (artifact.memory) {
    const { max, unsupported } = artifact.memory;
    if (unsupported) return { refused: `the module's memory cannot be bounded: ${unsupported}` };
    if (max === undefined) return { refused: "the module declares no memory maximum", limit: "memory_bytes" };
    if (max > limits.memoryBytes)
      return {
        refused: `the module's memory maximum (${max} bytes) exceeds memory_bytes (${limits.memoryBytes})`,
        limit: "memory_bytes",
      };
  }
  return {
    artifact,
    stdin: new TextEncoder().encode(canonicalJson(args)),
    ttlMs: stricterTtl(frame.ttlMs, caps.maxTtlMs),
    limits,
    inputs: frame.inputs,
  };
}
