/**
 * A code as stored and shown: NFKC, so what a keyboard or IME wrote in
 * compatibility forms (fullwidth `ＳＡＶＥ１０`, ligatures) is the code a shop
 * takes (`SAVE10`). Case is kept.
 */
export function normalizedCode(code: string): string {
  return code.normalize("NFKC");
}

/** The code compared, one per merchant: NFKC, upper case (upper-casing can leave a form NFKC composes again). */
export function codeKeyOf(code: string): string {
  return normalizedCode(code).toUpperCase().normalize("NFKC");
}

/** What decides whether lookups show a code: its publication, its moderation and its merchant's status. */
export interface CodeVisibility {
  publishedAt: Date | null | undefined;
  moderation: string;
}

/**
 * Whether every lookup shows this code (the same for every caller): published,
 * not disabled, its merchant approved. Nothing may name a code that fails this.
 */
export function lookedUp(code: CodeVisibility, merchantStatus: string): boolean {
  return code.publishedAt != null && code.moderation !== "disabled" && merchantStatus === "approved";
}
