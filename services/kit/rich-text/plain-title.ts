import { invalid } from "../handler/problem.js";
import { userText } from "../handler/text.js";
import { withoutTags } from "./markdown.js";

/**
 * A required plain-text field (a title): 1 to `max` characters after every HTML tag is removed (`withoutTags`), so
 * markup sent in it never comes back as markup, in a JSON answer, a page or a feed.
 */
export function plainTitle(field: string, value: string, max: number): string {
  const text = withoutTags(userText(field, value, max)).trim();
  if (text === "") throw invalid(field, `${field} is required (1 to ${max} characters, plain text)`);
  return text;
}
