import { createHash } from "node:crypto";
import { create, toJson, toJsonString, type JsonValue } from "@bufbuild/protobuf";
import {
  DispatchRequestSchema,
  NetPolicy,
  type DispatchRequest,
  type JobFrame,
} from "../../../gen/pf/bot/v1/jobs_pb.js";
import { LinkFrameSchema, type DeviceCaps } from "../../../gen/pf/bot/v1/link_pb.js";
import { invalid, problem } from "../../kit/handler/problem.js";

/** The link's frame limit: the whole `job` frame, as proto JSON on the wire, stays within it (the spec's 1 MiB). */
export const FRAME_MAX_BYTES = 1024 * 1024;

/** Classes the spec names, for which a pre-registered artifact is required. */
const ARTIFACT_CLASSES = new Set(["function", "code"]);

/** A media key as media's /f/{key} names one: never a URL (no `:` or `/`), never a credential (no `?`, `=`, `@`). */
const MEDIA_KEY = /^[A-Za-z0-9_-]{24}$/;

/**
 * The job frame's rules no field rule states (its field rules are the
 * contract's): an artifact for classes function and code; input names unique,
 * never `.` or `..`; an input's key a media key, never a URL or a credential.
 * 400 naming the field.
 */
export function checkFrame(frame: JobFrame): void {
  if (ARTIFACT_CLASSES.has(frame.class) && frame.artifact === "")
    throw invalid("job.artifact", `A ${frame.class} job names the pre-registered artifact to run.`);
  const names = new Set<string>();
  frame.inputs.forEach((input, at) => {
    if (input.name === "." || input.name === "..")
      throw invalid(`job.inputs[${at}].name`, `Input ${at} is named ${input.name}: a file name, not a directory.`);
    if (names.has(input.name))
      throw invalid(`job.inputs[${at}].name`, `Input ${at} is named ${input.name} again: input names are unique.`);
    names.add(input.name);
    if (!MEDIA_KEY.test(input.mediaKey))
      throw invalid(
        `job.inputs[${at}].media_key`,
        `Input ${input.name} must name a media object by its key: never a URL or a credential.`,
      );
  });
}

/** The `job` frame bot sends the device for a dispatch. */
export function jobFrame(jobId: string, frame: JobFrame, mediaUrl: string) {
  return create(LinkFrameSchema, { frame: { case: "job", value: { jobId, job: frame, mediaUrl } } });
}

/** 413 bot.frame_too_large when the `job` frame would pass the link's 1 MiB frame limit. */
export function checkFrameSize(jobId: string, frame: JobFrame, mediaUrl: string): void {
  // Measured as the gateway writes it on the WebSocket: field names as in the proto, every field emitted.
  const wire = { useProtoFieldName: true, alwaysEmitImplicit: true };
  const bytes = Buffer.byteLength(toJsonString(LinkFrameSchema, jobFrame(jobId, frame, mediaUrl), wire));
  if (bytes > FRAME_MAX_BYTES)
    throw problem(
      413,
      "bot.frame_too_large",
      `The job frame is ${bytes} bytes as sent; the link carries frames of at most ${FRAME_MAX_BYTES} bytes.`,
      { limit: FRAME_MAX_BYTES },
    );
}

/**
 * What makes two dispatches under one job id the same: every field of the
 * request, as JSON with object keys sorted (args is a JSON value whose key
 * order means nothing).
 */
export function dispatchHash(request: DispatchRequest): string {
  const json = toJson(DispatchRequestSchema, request, { alwaysEmitImplicit: true });
  return createHash("sha256").update(canonical(json)).digest("base64url");
}

function canonical(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key] as JsonValue)}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/** The stricter of the job's ttl and the device's own maximum (0: none), as the device merges them. */
export function stricterTtl(ttlMs: number, maxTtlMs: number): number {
  return maxTtlMs > 0 ? Math.min(ttlMs, maxTtlMs) : ttlMs;
}

/** Whether a device's advertised caps can enforce the job's network policy (absent means deny, as none). */
export function enforcesNet(net: NetPolicy, caps: DeviceCaps | undefined): boolean {
  const asked = net === NetPolicy.UNSPECIFIED ? NetPolicy.NONE : net;
  return (caps?.net ?? []).includes(asked);
}
