/** The longest slug, suffix included. */
export const MAX_SLUG_LENGTH = 80;

/**
 * The URL slug of a text: NFKD, marks stripped, lowercase, runs of anything
 * outside [a-z0-9] as one dash, no dash at either end, at most `maxLength`
 * characters (cut at a dash when one is near). Text with nothing Latin left
 * ("日本語", "🙂") answers `fallback`, "" when none is given: the caller
 * supplies a stable one (`claimSlug` uses the object's id).
 */
export function slugify(text: string, fallback = "", maxLength = MAX_SLUG_LENGTH): string {
  const ascii = text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    // Letters NFKD does not decompose.
    .replace(/ß/g, "ss")
    .replace(/[æÆ]/g, "ae")
    .replace(/[øØ]/g, "o")
    .replace(/[œŒ]/g, "oe")
    .replace(/[đĐ]/g, "d")
    .replace(/[łŁ]/g, "l")
    .toLowerCase();
  const slug = trimDashes(ascii.replace(/[^a-z0-9]+/g, "-"));
  return slug === "" ? fallback : cut(slug, maxLength);
}

/** At most `max` characters, ending at a dash boundary when that keeps most of it. */
export function cut(slug: string, max: number): string {
  if (slug.length <= max) return slug;
  const head = slug.slice(0, max);
  const dash = head.lastIndexOf("-");
  return trimDashes(dash >= max / 2 ? head.slice(0, dash) : head);
}

function trimDashes(value: string): string {
  return value.replace(/^-+|-+$/g, "");
}
