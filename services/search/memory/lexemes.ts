/**
 * PostgreSQL's text forms of a tsvector and a tsquery, read back: the index holds the lexemes PostgreSQL made
 * (stemming, stop words and `unaccent` stay PostgreSQL's, asked once per document and once per query's words).
 */

/** A position as PostgreSQL packs it: the weight (D 0 … A 3) in the top two of 16 bits, the position below. */
export const positionOf = (packed: number) => packed & 0x3fff;
export const weightOf = (packed: number) => packed >> 14;

const WEIGHTS: Readonly<Record<string, number>> = { A: 3, B: 2, C: 1, D: 0 };

/** A quoted lexeme at `at` (`'…'`, a quote or backslash doubled): its text and where it ends. */
function quoted(text: string, at: number): [string, number] {
  let out = "";
  let i = at + 1;
  for (;;) {
    const c = text[i];
    if (c === undefined) throw new Error(`unterminated lexeme in ${JSON.stringify(text)}`);
    if ((c === "'" || c === "\\") && text[i + 1] === c) ((out += c), (i += 2));
    else if (c === "'") return [out, i + 1];
    else ((out += c), i++);
  }
}

/** `'coffe':2A,7B 'deal':5` as lexemes (ascending, as PostgreSQL sorts them) and their packed positions. */
export function parseVector(text: string): Map<string, number[]> {
  const lexemes = new Map<string, number[]>();
  let i = 0;
  while (i < text.length) {
    if (text[i] === " ") {
      i++;
      continue;
    }
    const [lexeme, end] = quoted(text, i);
    const positions: number[] = [];
    i = end;
    if (text[i] === ":") {
      i++;
      for (;;) {
        let digits = "";
        while (text[i] >= "0" && text[i] <= "9") digits += text[i++];
        const weight = WEIGHTS[text[i]] ?? 0;
        if (text[i] in WEIGHTS) i++;
        positions.push((weight << 14) | Number(digits));
        if (text[i] !== ",") break;
        i++;
      }
    }
    lexemes.set(lexeme, positions);
  }
  return lexemes;
}

/** A tsquery the index answers: lexemes under and, or, not; `ordinal` tells equal lexemes apart (as PostgreSQL's items). */
export type Words =
  | { op: "word"; lexeme: string; ordinal: number }
  | { op: "not"; arg: Words }
  | { op: "and" | "or"; left: Words; right: Words }
  /** `left <distance> right` (`<->` is 1): phrases as websearch makes them, words chained to the left. */
  | { op: "phrase"; left: Words; right: Words & { op: "word" }; distance: number };

/** Why a tsquery stays with PostgreSQL: prefixes (`:*`), weights, phrases of other shapes than websearch's. */
export class Unanswered extends Error {}

/**
 * A tsquery's text (`'umbrella' & 'coffe' | !'kamera'`) as `Words`, or undefined when it holds no lexeme (only stop
 * words: nothing matches). Priorities as PostgreSQL's: not, then and, then or.
 */
export function parseQuery(text: string): Words | undefined {
  let i = 0;
  let ordinal = 0;
  const skip = () => {
    while (text[i] === " ") i++;
  };
  const or = (): Words => {
    let left = and();
    for (skip(); text[i] === "|"; skip()) (i++, (left = { op: "or", left, right: and() }));
    return left;
  };
  const and = (): Words => {
    let left = phrase();
    for (skip(); text[i] === "&"; skip()) (i++, (left = { op: "and", left, right: phrase() }));
    return left;
  };
  const phrase = (): Words => {
    let left = unary();
    for (skip(); text[i] === "<"; skip()) {
      const close = text.indexOf(">", i);
      const distance = text.slice(i + 1, close) === "-" ? 1 : Number(text.slice(i + 1, close));
      i = close + 1;
      const right = unary();
      if (right.op !== "word" || (left.op !== "word" && left.op !== "phrase") || !(distance >= 1))
        throw new Unanswered("phrase");
      left = { op: "phrase", left, right, distance };
    }
    return left;
  };
  const unary = (): Words => {
    skip();
    if (text[i] === "!") return (i++, { op: "not", arg: unary() });
    if (text[i] === "(") {
      i++;
      const inner = or();
      skip();
      if (text[i++] !== ")") throw new Error(`unbalanced tsquery ${JSON.stringify(text)}`);
      return inner;
    }
    if (text[i] !== "'") throw new Error(`unexpected tsquery ${JSON.stringify(text)}`);
    const [lexeme, end] = quoted(text, i);
    i = end;
    if (text[i] === ":") throw new Unanswered("prefix or weight");
    return { op: "word", lexeme, ordinal: ordinal++ };
  };
  skip();
  if (i === text.length) return undefined;
  const words = or();
  skip();
  if (i !== text.length) throw new Error(`trailing tsquery ${JSON.stringify(text)}`);
  return words;
}

/** The words' lexemes in item order (one per ordinal). */
export function operandsOf(words: Words): { lexeme: string; ordinal: number }[] {
  if (words.op === "word") return [words];
  if (words.op === "not") return operandsOf(words.arg);
  return [...operandsOf(words.left), ...operandsOf(words.right)];
}

/**
 * Where a phrase ends in a document: `at` answers a lexeme's positions, ascending; a phrase holds where its right
 * word sits `distance` past where its left part ends (PostgreSQL's `<N>`).
 */
export function phraseEnds(words: Words, at: (lexeme: string) => readonly number[]): number[] {
  if (words.op === "word") return [...at(words.lexeme)];
  if (words.op !== "phrase") throw new Unanswered("phrase of other than words");
  const left = new Set(phraseEnds(words.left, at));
  return at(words.right.lexeme).filter((end) => left.has(end - words.distance));
}
