/**
 * BCP 47 language tags and the text-search configurations they choose. The
 * primary subtag decides (`de-AT` → german); a tag search knows no stemming
 * for gets `simple` (words as written, lower-cased).
 */
const CONFIGS: Readonly<Record<string, string>> = {
  ar: "arabic",
  hy: "armenian",
  eu: "basque",
  ca: "catalan",
  da: "danish",
  nl: "dutch",
  en: "english",
  fi: "finnish",
  fr: "french",
  de: "german",
  el: "greek",
  hi: "hindi",
  hu: "hungarian",
  id: "indonesian",
  ga: "irish",
  it: "italian",
  lt: "lithuanian",
  ne: "nepali",
  no: "norwegian",
  nb: "norwegian",
  nn: "norwegian",
  pt: "portuguese",
  ro: "romanian",
  ru: "russian",
  sr: "serbian",
  es: "spanish",
  sv: "swedish",
  ta: "tamil",
  tr: "turkish",
  yi: "yiddish",
};

/** The configuration every document is also indexed with, and the one for unknown languages. */
export const SIMPLE = "simple";

/**
 * A well-formed BCP 47 tag (language, then subtags of 1–8 letters or digits), at most 35 characters: a
 * document's `lang` (422 when malformed); a query's `lang` is held to the same by the contract (query.proto).
 */
export const TAG = /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$/;

/** Whether a tag is well-formed ("" is not a tag). */
export function isLanguageTag(tag: string): boolean {
  return tag.length <= 35 && TAG.test(tag);
}

/** The text-search configuration of a well-formed tag, or of "" (no language): `simple` when unknown. */
export function configOf(tag: string): string {
  if (tag === "") return SIMPLE;
  return CONFIGS[tag.split("-")[0].toLowerCase()] ?? SIMPLE;
}
