/** A span of a text: UTF-16 offsets, end exclusive. */
export interface Span {
  text: string;
  start: number;
  end: number;
}

/** Tokens as providers are billed when they report none: one per four characters. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/** The sentences of a text (ended by . ! ? before a space, or by a line break), trimmed, with their offsets. */
export function sentencesOf(text: string): Span[] {
  const sentences: Span[] = [];
  let from = 0;
  const take = (end: number) => {
    const raw = text.slice(from, end);
    const start = from + raw.length - raw.trimStart().length;
    const body = raw.trim();
    if (/[\p{L}\p{N}]/u.test(body)) sentences.push({ text: body, start, end: start + body.length });
  };
  for (const boundary of text.matchAll(/[.!?]+(?=\s|$)|\n/g)) {
    const end = boundary.index + boundary[0].length;
    take(boundary[0] === "\n" ? boundary.index : end);
    from = end;
  }
  take(text.length);
  return sentences;
}

/** The words of a text, lower-cased, with their offsets. */
export function wordsOf(text: string): Span[] {
  return [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu)].map((match) => ({
    text: match[0].toLowerCase(),
    start: match.index,
    end: match.index + match[0].length,
  }));
}

/** English words too common to say what a text is about. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both " +
    "but by can could did do does doing down during each few for from further had has have having he her here hers " +
    "him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our " +
    "ours out over own same she should so some such than that the their theirs them then there these they this " +
    "those through to too under until up very was we were what when where which while who whom why will with would " +
    "you your yours also may might must shall us"
  ).split(" "),
);

/** A crude stem, enough for plurals and common endings to meet: prices/price, trading/trade, rallied/rally. */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  const rules: [RegExp, string][] = [
    [/ies$/, "y"],
    [/ied$/, "y"],
    [/(ss)es$/, "$1"],
    [/([^s])s$/, "$1"],
    [/(.{3,})ing$/, "$1"],
    [/(.{3,})ed$/, "$1"],
    [/(.{3,})ly$/, "$1"],
  ];
  for (const [ending, replacement] of rules) {
    if (ending.test(word)) return word.replace(ending, replacement).replace(/e$/, "");
  }
  return word.replace(/e$/, "");
}

/** The stems of a text's content words (stop words and single characters out), in order. */
export const termsOf = (text: string): string[] =>
  wordsOf(text)
    .map((word) => word.text)
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word))
    .map(stem);

/** How often each term occurs. */
export function frequencies(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/** A text's pieces as a stream sends them: each word with the space after it. */
export const wordPieces = (text: string): string[] => text.match(/\S+\s*|\s+/g) ?? [];

/** The text cut at a word so it stays within `tokens` estimated tokens. */
export function withinTokens(text: string, tokens: number): string {
  const limit = tokens * 4;
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit);
  const space = cut.lastIndexOf(" ");
  return (space > 0 ? cut.slice(0, space) : cut).trimEnd();
}
