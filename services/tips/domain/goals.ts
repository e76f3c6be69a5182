import { maxLength } from "../../kit/limits.js";
import { invalid, problem } from "../../kit/problem.js";

/** A goal title: 1 to 120 characters. */
export function requireTitle(title: string): string {
  const text = maxLength("title", title.trim(), 120);
  if (text === "") throw invalid("title", "title is required.");
  return text;
}

export function requireDescription(description: string): string {
  return maxLength("description", description, 2000);
}

/** An image URL: https, or "" for none. */
export function requireImageUrl(url: string): string {
  if (url === "") return "";
  maxLength("image_url", url, 2000);
  let protocol = "";
  try {
    protocol = new URL(url).protocol;
  } catch {
    // answered below
  }
  if (protocol !== "https:") throw invalid("image_url", "image_url must be an absolute https URL.");
  return url;
}

/** A closed goal keeps its history and is never edited again. */
export function requireOpen(goal: { closedAt?: Date | null }): void {
  if (goal.closedAt) throw problem(409, "goal.closed", "This goal is closed: it keeps its history and takes no edits.");
}

/**
 * The optimistic check of an edit: the revision the writer read, from the body
 * or If-Match (both must agree when both are sent); none means no check.
 */
export function checkRevision(current: bigint, fromBody: bigint | undefined, fromHeader: bigint | "any" | "never" | undefined): void {
  if (fromBody !== undefined && typeof fromHeader === "bigint" && fromBody !== fromHeader) {
    throw invalid("expected_revision", "expected_revision and If-Match disagree.");
  }
  const expected = fromBody ?? fromHeader;
  if (expected === undefined || expected === "any") return;
  if (expected === "never" || expected !== current) {
    throw problem(412, "revision.conflict", `The record is at revision ${current}: read it again and retry.`, { revision: current.toString() });
  }
}
