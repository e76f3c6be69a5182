import { frequencies, stem, termsOf, wordsOf } from "./text.js";

/** Two stems meet when equal, or when one begins the other and the shorter has at least four letters. */
const meets = (a: string, b: string): boolean =>
  a === b || (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a)));

/**
 * Rule-based: a label's weight is how often the text uses its words (label `price_alert` has the words price and
 * alert); scores are the weights' shares (0..1, together 1 unless nothing matched), best first, ties in label order.
 */
export function classify(text: string, labels: readonly string[]): { label: string; score: number }[] {
  const counts = [...frequencies(termsOf(text))];
  const weights = labels.map((label) =>
    wordsOf(label.replace(/[_.]/g, " "))
      .map((word) => stem(word.text))
      .reduce((sum, term) => sum + counts.reduce((n, [used, count]) => n + (meets(term, used) ? count : 0), 0), 0),
  );
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return labels
    .map((label, index) => ({ label, score: total === 0 ? 0 : Math.round((weights[index] / total) * 1e4) / 1e4 }))
    .sort((a, b) => b.score - a.score);
}
