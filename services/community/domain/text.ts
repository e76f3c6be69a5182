import { invalid, problem } from "../../kit/handler/problem.js";
import { plainTitle } from "../../kit/rich-text/plain-title.js";

/** A required plain-text field (a title): 1 to `max` characters after its tags are removed (they never come back). */
export const requireTitle = plainTitle;

/** A paste's text: at most `maxBytes` bytes of UTF-8, else 413 (the body is too large, not malformed). */
export function requirePasteText(value: string, maxBytes: number): string {
  if (value.trim() === "") throw invalid("body", "A text paste needs its text in body.");
  if (Buffer.byteLength(value, "utf8") > maxBytes)
    throw problem(413, "paste.too_large", `A paste's text holds at most ${maxBytes} bytes.`, { limit: maxBytes });
  return value;
}

/** A syntax language name: "" or 1-40 of [a-z0-9+#._-]. */
export function requireLanguage(value: string): string {
  const language = value.trim().toLowerCase();
  if (language !== "" && !/^[a-z0-9+#._-]{1,40}$/.test(language))
    throw invalid("language", "language is a name of 1 to 40 letters, digits or +#._-");
  return language;
}

/** A moderation reason: required, at most 500 characters, tags removed. */
export function requireReason(value: string): string {
  return requireTitle("reason", value, 500);
}

/** Limits of the text fields. */
export const TEXT = {
  title: 200,
  comment: 10_000,
  post: 20_000,
} as const;
