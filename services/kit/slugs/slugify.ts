import { slugify as transliterated } from "transliteration";

/** The longest slug, suffix included. */
export const MAX_SLUG_LENGTH = 80;

/**
 * The URL slug of a text: NFKC (ligatures, circled and full-width forms to
 * plain ones), then the `transliteration` package spells every script in
 * Latin ("Привет, мир" → privet-mir, "Καλημέρα" → kalimera, "中文标题" →
 * zhong-wen-biao-ti, "한국어" → hangugeo), lowercase, runs of anything outside
 * [a-z0-9] as one dash, no dash at either end, at most `maxLength` characters
 * (cut at a dash when one is near). Text with nothing it can spell ("🙂")
 * answers `fallback`, "" when none is given: the caller supplies a stable one
 * (`claimSlug` uses the object's id).
 */
export function slugify(text: string, fallback = "", maxLength = MAX_SLUG_LENGTH): string {
  const slug = transliterated(text.normalize("NFKC"), { lowercase: true, separator: "-", allowedChars: "a-zA-Z0-9" });
  return slug === "" ? fallback : cut(slug, maxLength);
}

/** At most `max` characters, ending at a dash boundary when that keeps most of it (the package bounds no length). */
export function cut(slug: string, max: number): string {
  if (slug.length <= max) return slug;
  const head = slug.slice(0, max);
  const dash = head.lastIndexOf("-");
  return trimDashes(dash >= max / 2 ? head.slice(0, dash) : head);
}

function trimDashes(value: string): string {
  return value.replace(/^-+|-+$/g, "");
}
