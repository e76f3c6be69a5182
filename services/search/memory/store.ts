import type { Viewer } from "../domain/visibility.js";
import { parseVector, phraseEnds, positionOf, type Words } from "./lexemes.js";
import { difference, intersect, Postings, union } from "./postings.js";

/** A document row as the index takes it (db/feed.ts reads it): `live` when published and not deleted. */
export interface IndexedRow {
  owner: string;
  type: string;
  id: string;
  revision: string;
  live: boolean;
  public: boolean;
  access: string[];
  facetPairs: string[];
  titleFolded: string;
  /** `published_at` in microseconds since the epoch (PostgreSQL's precision: order and recency as its). */
  publishedUs: number;
  /** `tsv::text`. */
  tsv: string;
}

/**
 * A live document under its number. `terms` packs, in one array: the facet pair count and pair numbers, the
 * lexeme count, lexeme numbers (ascending), their offsets into the packed positions (one more than lexemes), and
 * the positions (one typed array a document: each costs about 100 bytes of header).
 */
export interface Doc {
  owner: string;
  type: string;
  id: string;
  revision: string;
  public: boolean;
  access: string[];
  titleFolded: string;
  publishedUs: number;
  terms: Uint32Array;
}

/** Letters and digits, as PostgreSQL's `[[:alnum:]]` in the titles' suggestions. */
export const ALNUM = /[\p{L}\p{N}]/u;

/** The beginnings (1 to 3 characters) of a title's words: what suggestions look up before checking the title. */
export function titlePrefixes(folded: string): Set<string> {
  const prefixes = new Set<string>();
  for (const word of folded.split(/[^\p{L}\p{N}]+/u))
    for (let n = 1; n <= Math.min(3, word.length); n++) prefixes.add(word.slice(0, n));
  return prefixes;
}

const keyOf = (owner: string, type: string, id: string) => `${owner}\u0000${type}\u0000${id}`;

/**
 * The in-memory index: live documents by a dense number (a new one for every version written), posting lists of
 * lexemes, facet pairs, owners and title word beginnings. No I/O: fed rows, asked for numbers.
 */
export class Store {
  private readonly docs: (Doc | undefined)[] = [];
  private readonly byKey = new Map<string, { number: number; revision: string; live: boolean }>();
  private readonly lexemeNumbers = new Map<string, number>();
  private readonly lexemePostings: Postings[] = [];
  private readonly pairNumbers = new Map<string, number>();
  readonly pairNames: string[] = [];
  private readonly pairPostings: Postings[] = [];
  private readonly owners = new Map<string, Postings>();
  private readonly prefixes = new Map<string, Postings>();
  private readonly every = new Postings();
  /** Owners, types and access lists are few and repeated: one string (one list) each, not one a document. */
  private readonly interned = new Map<string, string>();
  private readonly accessLists = new Map<string, string[]>();
  /** Live documents, and versions replaced but still in posting lists. */
  live = 0;
  dead = 0;
  /** Grows with every change: answers cached for an older version are stale. */
  version = 0;

  doc(number: number): Doc | undefined {
    return this.docs[number];
  }

  /** Whether the row is the version held already (a row read again past the watermark). */
  holds(row: IndexedRow): boolean {
    const held = this.byKey.get(keyOf(row.owner, row.type, row.id));
    return held !== undefined && held.revision === row.revision && held.live === row.live;
  }

  /** Takes a row: its previous version leaves, a live one enters under a new number. */
  apply(row: IndexedRow): void {
    const key = keyOf(row.owner, row.type, row.id);
    const held = this.byKey.get(key);
    if (held?.live) ((this.docs[held.number] = undefined), this.live--, this.dead++);
    this.version++;
    if (!row.live) {
      this.byKey.set(key, { number: -1, revision: row.revision, live: false });
      return;
    }
    const number = this.docs.length;
    const pairs = row.facetPairs.map((pair) =>
      this.numberOf(pair, this.pairNumbers, this.pairPostings, this.pairNames),
    );
    const vector = [...parseVector(row.tsv)].map(
      ([lexeme, positions]) => [this.numberOf(lexeme, this.lexemeNumbers, this.lexemePostings), positions] as const,
    );
    vector.sort((a, b) => a[0] - b[0]);
    const positions = vector.reduce((sum, [, each]) => sum + each.length, 0);
    const terms = new Uint32Array(2 + pairs.length + vector.length * 2 + 1 + positions);
    terms[0] = pairs.length;
    terms.set(pairs, 1);
    let at = 1 + pairs.length;
    terms[at++] = vector.length;
    const offsets = at + vector.length;
    let packedAt = offsets + vector.length + 1;
    vector.forEach(([lexeme, each], i) => {
      terms[at + i] = lexeme;
      terms[offsets + i] = packedAt;
      terms.set(each, packedAt);
      packedAt += each.length;
      this.lexemePostings[lexeme].add(number);
    });
    terms[offsets + vector.length] = packedAt;
    for (const pair of pairs) this.pairPostings[pair].add(number);
    this.listOf(this.owners, row.owner).add(number);
    for (const prefix of titlePrefixes(row.titleFolded)) this.listOf(this.prefixes, prefix).add(number);
    this.every.add(number);
    this.docs.push({
      owner: this.intern(row.owner),
      type: this.intern(row.type),
      id: row.id,
      revision: row.revision,
      public: row.public,
      access: this.accessList(row.access),
      titleFolded: row.titleFolded,
      publishedUs: row.publishedUs,
      terms,
    });
    this.byKey.set(key, { number, revision: row.revision, live: true });
    this.live++;
  }

  private intern(text: string): string {
    const held = this.interned.get(text);
    if (held !== undefined) return held;
    this.interned.set(text, text);
    return text;
  }

  private accessList(access: string[]): string[] {
    const key = access.join("\u0000");
    const held = this.accessLists.get(key);
    if (held) return held;
    // Person-specific lists are many: kept as they come, only shared ones (empty, groups, roles) interned.
    if (access.some((entry) => entry.startsWith("usr_") || entry.startsWith("gst_"))) return access;
    this.accessLists.set(key, access);
    return access;
  }

  private numberOf(name: string, numbers: Map<string, number>, postings: Postings[], names?: string[]): number {
    let number = numbers.get(name);
    if (number === undefined) {
      number = postings.length;
      numbers.set(name, number);
      postings.push(new Postings());
      names?.push(name);
    }
    return number;
  }

  private listOf(lists: Map<string, Postings>, name: string): Postings {
    let list = lists.get(name);
    if (!list) lists.set(name, (list = new Postings()));
    return list;
  }

  /** The document's facet pair numbers. */
  pairsOf(doc: Doc): Uint32Array {
    return doc.terms.subarray(1, 1 + doc.terms[0]);
  }

  /** The document's packed positions of a lexeme (`coverDensity`'s question). */
  positionsIn(doc: Doc, lexeme: string): Uint32Array | undefined {
    const number = this.lexemeNumbers.get(lexeme);
    if (number === undefined) return undefined;
    const { terms } = doc;
    const at = 2 + terms[0];
    const count = terms[at - 1];
    let low = 0;
    let high = count;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (terms[at + mid] < number) low = mid + 1;
      else high = mid;
    }
    if (low === count || terms[at + low] !== number) return undefined;
    return terms.subarray(terms[at + count + low], terms[at + count + low + 1]);
  }

  /** Numbers (some replaced since) of documents with every pair, of the owner, matching the words. */
  candidates(scope: { owner?: string; filters: readonly string[] }, words?: Words): Uint32Array {
    let set: Uint32Array | undefined;
    const narrow = (list: Uint32Array) => (set = set === undefined ? list : intersect(set, list));
    if (scope.owner !== undefined) narrow(this.owners.get(scope.owner)?.view() ?? new Uint32Array(0));
    for (const pair of scope.filters) {
      const number = this.pairNumbers.get(pair);
      narrow(number === undefined ? new Uint32Array(0) : this.pairPostings[number].view());
    }
    if (words) {
      const [matched, negated] = this.matching(words);
      if (!negated) narrow(matched);
      else set = difference(set ?? this.every.view(), matched);
    }
    return set ?? this.every.view();
  }

  /** Numbers with a title word beginning with `prefix` (1 to 3 characters). */
  titled(prefix: string): Uint32Array {
    return this.prefixes.get(prefix)?.view() ?? new Uint32Array(0);
  }

  /** All numbers ever given (replaced ones included). */
  all(): Uint32Array {
    return this.every.view();
  }

  private holdsPhrase(number: number, words: Words): boolean {
    const doc = this.docs[number];
    if (!doc) return false;
    const at = (lexeme: string) => [...(this.positionsIn(doc, lexeme) ?? [])].map(positionOf).sort((a, b) => a - b);
    return phraseEnds(words, at).length > 0;
  }

  /** The words' matches, as a set or as the complement of one (`negated`): no universe is built for a `not`. */
  private matching(words: Words): [Uint32Array, boolean] {
    if (words.op === "word") {
      const number = this.lexemeNumbers.get(words.lexeme);
      return [number === undefined ? new Uint32Array(0) : this.lexemePostings[number].view(), false];
    }
    if (words.op === "not") {
      const [set, negated] = this.matching(words.arg);
      return [set, !negated];
    }
    if (words.op === "phrase") {
      // Documents with every word of the phrase, then those where the words sit at their distances.
      const [left] = this.matching(words.left);
      const [right] = this.matching(words.right);
      return [intersect(left, right).filter((number) => this.holdsPhrase(number, words)), false];
    }
    const [a, an] = this.matching(words.left);
    const [b, bn] = this.matching(words.right);
    if (words.op === "and") {
      if (!an && !bn) return [intersect(a, b), false];
      if (!an) return [difference(a, b), false];
      if (!bn) return [difference(b, a), false];
      return [union(a, b), true];
    }
    if (!an && !bn) return [union(a, b), false];
    if (an && bn) return [intersect(a, b), true];
    return an ? [difference(a, b), true] : [difference(b, a), true];
  }
}

/** Whether the viewer may see the document (published and live already: only such are held). */
export function visibleTo(doc: Doc, viewer: Viewer): boolean {
  if (doc.public) return true;
  for (const key of viewer.keys) if (doc.access.includes(key)) return true;
  return false;
}

/** PostgreSQL's order of the recency index: newest first, then owner, type, id (C collation: code units). */
export function newestFirst(a: Doc, b: Doc): number {
  return b.publishedUs - a.publishedUs || byKey(a, b);
}

export function byKey(a: Pick<Doc, "owner" | "type" | "id">, b: Pick<Doc, "owner" | "type" | "id">): number {
  if (a.owner !== b.owner) return a.owner < b.owner ? -1 : 1;
  if (a.type !== b.type) return a.type < b.type ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}
