import { problem } from "../../kit/handler/problem.js";
import { optionalUrl } from "../../kit/handler/urls.js";

/** An image URL: https, or "" for none. */
export function requireImageUrl(url: string): string {
  return optionalUrl("image_url", url);
}

/** A closed goal keeps its history and is never edited again. */
export function requireOpen(goal: { closedAt?: Date | null }): void {
  if (goal.closedAt) throw problem(409, "goal.closed", "This goal is closed: it keeps its history and takes no edits.");
}
