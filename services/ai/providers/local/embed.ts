import { termsOf } from "./text.js";

/** The vector's dimensions. */
export const DIMENSIONS = 256;
/** Word pairs say less than words alone but tell "rate cut" from "cut rate". */
const BIGRAM_WEIGHT = 0.5;

/** FNV-1a, 32 bits: a small, stable hash, the same on every machine. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Feature hashing: the text's terms and pairs of neighbouring terms, each added (with a sign from its hash, so
 * collisions tend to cancel) into 256 dimensions, then L2-normalised; texts sharing words point the same way. A
 * text without terms is the zero vector.
 */
export function embed(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  const add = (feature: string, weight: number) => {
    const hash = fnv1a(feature);
    vector[hash % DIMENSIONS] += hash & 0x80000000 ? -weight : weight;
  };
  const terms = termsOf(text);
  terms.forEach((term, index) => {
    add(term, 1);
    if (index > 0) add(`${terms[index - 1]} ${term}`, BIGRAM_WEIGHT);
  });
  const length = Math.hypot(...vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}
