import type { HandlerContext } from "@connectrpc/connect";
import { invalid, problem } from "./problem.js";

/**
 * If-Match as the writer's expectation (RFC 9110 §13.1.1): a revision (`"3"` or
 * `3`), "any" for `*` (the record must exist), or "never" for a weak tag, which
 * strong comparison never matches; undefined when absent.
 */
export function parseIfMatch(header: string | null): bigint | "any" | "never" | undefined {
  if (header === null || header.trim() === "") return undefined;
  const value = header.trim();
  if (value === "*") return "any";
  if (value.startsWith("W/")) return "never";
  const match = /^"?(\d{1,18})"?$/.exec(value);
  if (!match) throw invalid("If-Match", "If-Match must be the record's revision");
  return BigInt(match[1]);
}

/** The If-Match of a call, parsed (see parseIfMatch). */
export function ifMatchOf(call: HandlerContext): bigint | "any" | "never" | undefined {
  return parseIfMatch(call.requestHeader.get("if-match"));
}

/**
 * The optimistic check of an edit: the revision the writer read, from the body
 * or If-Match (both must agree when both are sent); none means no check.
 */
export function checkRevision(
  current: bigint,
  fromBody: bigint | undefined,
  fromHeader: bigint | "any" | "never" | undefined,
): void {
  if (fromBody !== undefined && typeof fromHeader === "bigint" && fromBody !== fromHeader) {
    throw invalid("expected_revision", "expected_revision and If-Match disagree.");
  }
  // A weak If-Match matches nothing (strong comparison), even beside a body revision that would.
  const expected = fromHeader === "never" ? "never" : (fromBody ?? fromHeader);
  if (expected === undefined || expected === "any") return;
  if (expected === "never" || expected !== current) {
    throw problem(412, "revision.conflict", `The record is at revision ${current}: read it again and retry.`, {
      revision: current.toString(),
    });
  }
}
