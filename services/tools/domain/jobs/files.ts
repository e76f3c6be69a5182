import { createHash } from "node:crypto";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";

/** Input files a job takes at most, whatever its tool says (the contract's media_keys bound). */
export const MAX_JOB_FILES = 8;

/** What a job tool takes as input files: at most `maxCount`, each at most `maxBytes`, of the `accept` types. */
export interface FileRules {
  accept: readonly string[];
  maxCount: number;
  maxBytes: number;
}

/** The file rules of a job tool: its descriptor's, within the service's own bounds (PF_TOOLS_MAX_FILE_BYTES). */
export function fileRulesOf(tool: ToolDescriptor, maxFileBytes: number): FileRules {
  const files = tool.files ?? { accept: [], maxCount: 0, maxBytes: 0 };
  return {
    accept: files.accept,
    maxCount: Math.min(files.maxCount, MAX_JOB_FILES),
    maxBytes: Math.min(files.maxBytes, maxFileBytes),
  };
}

/** A media type's essence, lowercased: `image/png; x=y` → `image/png`; empty is application/octet-stream. */
export function essenceOf(type: string): string {
  const essence = type.split(";")[0].trim().toLowerCase();
  return essence === "" ? "application/octet-stream" : essence;
}

/** Whether a file of this media type is one the tool takes (`image/*` takes every image type). */
export function accepts(rules: FileRules, type: string): boolean {
  const essence = essenceOf(type);
  return rules.accept.some((each) =>
    each.endsWith("/*") ? essence.startsWith(each.slice(0, -1)) : essence === each.toLowerCase(),
  );
}

/** A file's name as the job keeps it: the base name only (a client may send a path), at most 255 characters. */
export function fileNameOf(name: string, n: number): string {
  const base = name.split(/[\\/]/).pop()!.trim();
  return (base === "" || base === "." || base === ".." ? `file-${n}` : base).slice(0, 255);
}

/** What makes two creations of a job the same request, for its idempotency key. */
export interface JobRequestFacts {
  tool: string;
  input: unknown;
  mediaKeys: readonly string[];
  /** Each uploaded file's name, media type and digest, in order. */
  files: readonly { name: string; contentType: string; sha256: string }[];
}

/**
 * The request's hash: the SHA-256 of its facts as canonical JSON (object keys sorted at every level), so the same
 * input sent with its members in another order is the same request.
 */
export function requestHashOf(facts: JobRequestFacts): string {
  return createHash("sha256").update(canonical(facts)).digest("base64url");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, each]) => each !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, each]) => `${JSON.stringify(key)}:${canonical(each)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Where a job's input file n is kept in the service's blob store (a retry refers to the same blob). */
export function inputBlobKey(jobId: string, n: number): string {
  return `${jobId}/in/${n}`;
}

/**
 * Where an attempt's result file n is kept: each attempt writes under its own keys, so what a lost executor left
 * is never mistaken for the files of the attempt that succeeded (only the rows its success wrote are served).
 */
export function resultBlobKey(jobId: string, attempt: number, n: number): string {
  return `${jobId}/a${attempt}/${n}`;
}
