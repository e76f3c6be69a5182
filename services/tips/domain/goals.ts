import { maxLength } from "../../kit/handler/text.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { optionalUrl } from "../../kit/handler/urls.js";

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
  return optionalUrl("image_url", url);
}

/** A closed goal keeps its history and is never edited again. */
export function requireOpen(goal: { closedAt?: Date | null }): void {
  if (goal.closedAt) throw problem(409, "goal.closed", "This goal is closed: it keeps its history and takes no edits.");
}
