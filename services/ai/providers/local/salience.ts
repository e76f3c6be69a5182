import { frequencies, sentencesOf, termsOf, type Span } from "./text.js";

/** A sentence of one of the texts, with how much it says of what the texts are about. */
export interface RankedSentence {
  /** Which text it is from (its index). */
  source: number;
  sentence: Span;
  score: number;
}

/**
 * The texts' sentences, most salient first: a sentence scores the term frequencies (over all texts) of its distinct
 * terms, divided by the square root of its length in terms so long sentences do not win by length alone. Ties keep
 * the original order, so the same texts always rank the same.
 */
export function rankSentences(texts: readonly string[]): RankedSentence[] {
  const counts = frequencies(texts.flatMap(termsOf));
  const ranked = texts.flatMap((text, source) =>
    sentencesOf(text).map((sentence) => {
      const terms = termsOf(sentence.text);
      const distinct = new Set(terms);
      let sum = 0;
      for (const term of distinct) sum += counts.get(term) ?? 0;
      return { source, sentence, score: terms.length === 0 ? 0 : sum / Math.sqrt(terms.length) };
    }),
  );
  // Array.prototype.sort is stable: equal scores stay in reading order.
  return ranked.sort((a, b) => b.score - a.score);
}

/** The `count` most salient sentences, back in reading order. */
export function salientSentences(texts: readonly string[], count: number): RankedSentence[] {
  return rankSentences(texts)
    .slice(0, count)
    .sort((a, b) => a.source - b.source || a.sentence.start - b.sentence.start);
}
