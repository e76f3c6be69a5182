import { invalid } from "./problem.js";

/** Refuses text longer than `max` characters with 400 naming the field; answers the text. */
export function maxLength(field: string, value: string, max: number): string {
  if (value.length > max) throw invalid(field, `${field} holds at most ${max} characters`);
  return value;
}

/**
 * A person's text field (a title, a comment body in Markdown): 400 naming the
 * field when it is blank (unless `optional`) or longer than `max` characters.
 * NUL and lone surrogates never get here (the input guard refuses them on
 * every call); HTML in it is inert because it leaves only through
 * `renderMarkdown` (kit/rich-text).
 */
export function userText(field: string, value: string, max: number, optional = false): string {
  if (!optional && value.trim() === "") throw invalid(field, `${field} is required`);
  return maxLength(field, value, max);
}
