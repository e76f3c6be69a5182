import { getOption } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { success_statuses } from "../../../gen/pf/v1/options_pb.js";
import { deadlineKey } from "../runtime/call.js";

/** The response header that carries a success status other than the declared first one; the gateway turns it into the status. */
export const STATUS_HEADER = "pf-http-status";

/**
 * Answers another of the RPC's declared success statuses than its first (an
 * upsert that found its row answers 200 where a create answers 201). A status
 * the RPC does not declare is a contract error.
 */
export function answerStatus(call: HandlerContext, status: number): void {
  const declared = getOption(call.method, success_statuses);
  if (!declared.includes(status)) throw new Error(`${call.method.name} does not declare the success status ${status}`);
  call.responseHeader.set(STATUS_HEADER, String(status));
}

/** Permanent redirects a read may answer (an old slug): the RPC declares 301 among its success statuses. */
export const REDIRECT_STATUS = 301;

/**
 * Answers a 301 to `location` (an absolute path or URL): the gateway sends
 * the Location header and no body. The handler returns an empty output
 * message; RPC callers read the `location` response header.
 */
export function answerRedirect(call: HandlerContext, location: string): void {
  answerStatus(call, REDIRECT_STATUS);
  call.responseHeader.set("location", location);
}

/** Room a call keeps before its deadline after waiting, so its answer (a 202) still reaches the caller in time. */
const ANSWER_MARGIN_MS = 1_000;

/**
 * How long a call may wait for work it started (a job, a run): `ms`, cut short of the call's deadline, the call scope's
 * (its caller's, its default or its parent's: `callScope`) on either transport.
 */
export function waitWithinDeadline(call: HandlerContext, ms: number): number {
  const deadline = call.values.get(deadlineKey);
  const left = deadline === undefined ? call.timeoutMs() : deadline - Date.now();
  return Math.max(0, Math.min(ms, left === undefined ? Infinity : left - ANSWER_MARGIN_MS));
}

/** Answers 202 with the Location where the caller reads the work it started and that is still going. */
export function answerAccepted(call: HandlerContext, location: string): void {
  answerStatus(call, 202);
  call.responseHeader.set("location", location);
}
