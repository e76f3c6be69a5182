import { operandsOf, phraseEnds, positionOf, weightOf, type Words } from "./lexemes.js";

/** `ts_rank_cd`'s default weights of D, C, B, A, inverted. */
const INVERSE_WEIGHTS = [1 / 0.1, 1 / 0.2, 1 / 0.4, 1 / 1.0];

/** One position of the document holding query lexemes: the packed position and the query items it satisfies. */
interface Held {
  packed: number;
  lexeme: string;
  items: number[];
}

/** Ternary truth, as PostgreSQL evaluates a query over the items seen so far. */
const NO = 0;
const YES = 1;
const MAYBE = 2;

/** Each query item's positions within the cover looked at so far (none: not seen). */
type Seen = number[][];

function execute(words: Words, seen: Seen, skipNot: boolean): number {
  switch (words.op) {
    case "word":
      return seen[words.ordinal].length > 0 ? YES : NO;
    case "phrase": {
      const at = (lexeme: string) => {
        // The item of this lexeme: equal lexemes share their positions (one document entry).
        const item = operandsOf(words).find((operand) => operand.lexeme === lexeme)!;
        return [...seen[item.ordinal]].sort((a, b) => a - b);
      };
      return phraseEnds(words, at).length > 0 ? YES : NO;
    }
    case "not": {
      if (skipNot) return MAYBE;
      const inner = execute(words.arg, seen, skipNot);
      return inner === NO ? YES : inner === YES ? NO : MAYBE;
    }
    case "and": {
      const left = execute(words.left, seen, skipNot);
      if (left === NO) return NO;
      const right = execute(words.right, seen, skipNot);
      return right === NO ? NO : right === YES ? left : MAYBE;
    }
    case "or": {
      const left = execute(words.left, seen, skipNot);
      if (left === YES) return YES;
      const right = execute(words.right, seen, skipNot);
      return right === NO ? left : right === YES ? YES : MAYBE;
    }
  }
}

/** The document's positions of the query's lexemes, in PostgreSQL's order (position, weight, lexeme), equal ones joined. */
function represent(words: Words, positions: (lexeme: string) => ArrayLike<number> | undefined): Held[] {
  const held: Held[] = [];
  for (const { lexeme, ordinal } of operandsOf(words)) {
    const packed = positions(lexeme) ?? [];
    for (let i = 0; i < packed.length; i++) held.push({ packed: packed[i], lexeme, items: [ordinal] });
  }
  held.sort(
    (a, b) =>
      positionOf(a.packed) - positionOf(b.packed) ||
      weightOf(a.packed) - weightOf(b.packed) ||
      (a.lexeme < b.lexeme ? -1 : a.lexeme > b.lexeme ? 1 : 0),
  );
  const joined: Held[] = [];
  for (const each of held) {
    const last = joined[joined.length - 1];
    if (last && last.packed === each.packed && last.lexeme === each.lexeme) last.items.push(...each.items);
    else joined.push({ ...each, items: [...each.items] });
  }
  return joined;
}

/**
 * `ts_rank_cd(tsv, query, 32)` as PostgreSQL 15 computes it (tsrank.c, `calc_rank_cd`): covers of the query found
 * left to right, each weighing its length over its weights and noise, normalised rank / (rank + 1), as a float4.
 * `positions` answers the document's packed positions of a lexeme.
 */
export function coverDensity(words: Words, positions: (lexeme: string) => ArrayLike<number> | undefined): number {
  const doc = represent(words, positions);
  if (doc.length === 0) return 0;
  const size = operandsOf(words).length;
  let start = 0;
  let rank = 0;
  for (;;) {
    const cover = nextCover(doc, words, size, start);
    if (!cover) break;
    start = cover.next;
    let inverse = 0;
    for (let i = cover.begin; i <= cover.end; i++) inverse += INVERSE_WEIGHTS[weightOf(doc[i].packed)];
    const density = (cover.end - cover.begin + 1) / inverse;
    let noise = cover.q - cover.p - (cover.end - cover.begin);
    if (noise < 0) noise = Math.trunc((cover.end - cover.begin) / 2);
    rank += density / (1 + noise);
  }
  return Math.fround(rank / (rank + 1));
}

/** PostgreSQL's `Cover`: from `start`, the first position where the query holds, then back to where it starts holding. */
function nextCover(
  doc: Held[],
  words: Words,
  size: number,
  start: number,
): { begin: number; end: number; p: number; q: number; next: number } | undefined {
  for (let from = start; from < doc.length; from++) {
    let seen: Seen = Array.from({ length: size }, () => []);
    let end = -1;
    for (let i = from; i < doc.length; i++) {
      for (const item of doc[i].items) seen[item].push(positionOf(doc[i].packed));
      if (execute(words, seen, false) !== NO) {
        if (positionOf(doc[i].packed) > 0) end = i;
        break;
      }
    }
    if (end < 0) return undefined;
    seen = Array.from({ length: size }, () => []);
    const q = positionOf(doc[end].packed);
    let p = 0x7fffffff;
    let begin = end;
    let i = end;
    for (; i >= from; i--) {
      for (const item of doc[i].items) seen[item].push(positionOf(doc[i].packed));
      if (execute(words, seen, true) !== NO) {
        if (positionOf(doc[i].packed) < p) ((begin = i), (p = positionOf(doc[i].packed)));
        break;
      }
    }
    if (p <= q) return { begin, end, p, q, next: i + 1 };
  }
  return undefined;
}
