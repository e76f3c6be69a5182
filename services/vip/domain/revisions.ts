import type { HandlerContext } from "@connectrpc/connect";
import { parseIfMatch } from "../../kit/revisions.js";
import { problem } from "../../kit/problem.js";

/** The revision a writer based its change on: If-Match, else expected_revision; undefined when neither (no check). */
export function expectedRevision(field: bigint, call: HandlerContext): bigint | "any" | "never" | undefined {
  return parseIfMatch(call.requestHeader.get("if-match")) ?? (field > 0n ? field : undefined);
}

/** 412 revision.conflict unless the record is still at the expected revision. */
export function checkRevision(expected: bigint | "any" | "never" | undefined, current: bigint): void {
  if (expected === undefined || expected === "any" || expected === current) return;
  throw problem(412, "revision.conflict", "The record changed since that revision was read.", { revision: current.toString() });
}
