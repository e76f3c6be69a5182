import type { DocumentKey, Position, Query } from "../domain/query.js";
import { QUERY_LIMITS, RECENCY_HALF_DAYS } from "../domain/query.js";
import type { Viewer } from "../domain/visibility.js";
import type { SearchPage } from "../engine/engine.js";
import { parseQuery, Unanswered, type Words } from "./lexemes.js";
import { intersect } from "./postings.js";
import { coverDensity } from "./rank.js";
import { ALNUM, byKey, type Doc, newestFirst, type Store, visibleTo } from "./store.js";

/** A page as the index answers it: document numbers with their scores (limit + 1, as the engine's pages), the counts. */
export interface IndexedPage {
  rows: { number: number; score: number }[];
  facets: SearchPage["facets"];
  countsAtLeast: boolean;
}

/** What a query's matches cost once per index version: kept for the next query alike (`Answers`' cache). */
interface Matches {
  version: number;
  /** Newest first: every match, or the rank window's with words. */
  numbers: Uint32Array;
  /** With words: each windowed match's cover density (time-free, so cached; recency is applied per query). */
  ranks?: Float64Array;
  /** Suggestions: each one's score, in order. */
  scores?: Float64Array;
  facets: SearchPage["facets"];
}

/** Entries the cache keeps; its numbers are bounded too (`CACHED_NUMBERS`). */
const CACHED = 2000;
const CACHED_NUMBERS = 4_000_000;

const DAY_US = 86_400_000_000;

/**
 * `1 + 1 / (1 + age_days / 30)` as one exact ratio of microseconds, rounded once (PostgreSQL computes it in numeric
 * and rounds once to float8): (60 days + age) / (30 days + age), age at least 0.
 */
export function recencyBoost(atUs: number, publishedUs: number): number {
  const age = Math.max(0, atUs - publishedUs);
  return (2 * RECENCY_HALF_DAYS * DAY_US + age) / (RECENCY_HALF_DAYS * DAY_US + age);
}

/** A suggestion tier's score, `tier + epoch / 1e11`, read from its exact decimal as PostgreSQL's float8 cast does. */
export function tierScore(tier: number, publishedUs: number): number {
  return Number(`${tier}.${String(Math.max(0, publishedUs)).padStart(17, "0")}`);
}

/**
 * The queries the index answers, over a `Store`, with PostgreSQL's rules (db/queries.ts): the same visibility,
 * orders, rank window, scores and cursors. Facet counts are exact over every match (`countsAtLeast` false): the
 * counting pass is one array increment per facet value of each match. Undefined: PostgreSQL answers instead
 * (phrases, prefixes; a suggestion with no title word beginning with q, the typo tier).
 */
export class Answers {
  private readonly cache = new Map<string, Matches>();
  private cachedNumbers = 0;

  constructor(private readonly store: Store) {}

  /** `tsquery`: the words' text as PostgreSQL made it (undefined for an empty q). */
  search(viewer: Viewer, query: Query, tsquery: string | undefined, position: Position | undefined, at: Date) {
    let words: Words | undefined;
    if (tsquery !== undefined) {
      try {
        words = parseQuery(tsquery);
      } catch (error) {
        if (error instanceof Unanswered) return undefined;
        throw error;
      }
      // Only stop words: PostgreSQL's `@@` matches nothing.
      if (words === undefined) return { rows: [], ...countsOf(query, emptyCounts(query)) };
    }
    const key = JSON.stringify(["search", viewer.keys, query.owner, query.type, query.filters, query.counted, tsquery]);
    const matches = this.cached(key, () => this.matches(viewer, query, words));
    return words ? this.ranked(matches, query, position, at) : this.recent(matches, query, position);
  }

  private matches(viewer: Viewer, query: Query, words: Words | undefined): Matches {
    const docs = this.visible(viewer, query, this.store.candidates(query, words));
    docs.sort((a, b) => newestFirst(a[1], b[1]));
    const facets = this.counts(query, docs);
    if (!words) return { version: this.store.version, numbers: Uint32Array.from(docs, ([n]) => n), facets };
    const window = docs.slice(0, QUERY_LIMITS.rankWindow);
    const ranks = Float64Array.from(window, ([, doc]) =>
      coverDensity(words, (lexeme) => this.store.positionsIn(doc, lexeme)),
    );
    return { version: this.store.version, numbers: Uint32Array.from(window, ([n]) => n), ranks, facets };
  }

  private ranked(matches: Matches, query: Query, position: Position | undefined, at: Date): IndexedPage {
    const atUs = at.getTime() * 1000;
    const size = query.limit + 1;
    // The page's best, kept in order as the window is read once: no sort of the whole window per query.
    const best: { number: number; score: number; doc: Doc }[] = [];
    const before = (a: (typeof best)[number], b: (typeof best)[number]) => b.score - a.score || byKey(a.doc, b.doc);
    matches.numbers.forEach((number, i) => {
      const doc = this.store.doc(number)!;
      const score = matches.ranks![i] * recencyBoost(atUs, doc.publishedUs);
      if (position?.kind === "ranked" && !after(score, doc, position.score, position.key)) return;
      const row = { number, score, doc };
      if (best.length === size && before(row, best[size - 1]) >= 0) return;
      let at = best.length === size ? size - 1 : best.length;
      while (at > 0 && before(row, best[at - 1]) < 0) ((best[at] = best[at - 1]), at--);
      best[at] = row;
    });
    return { rows: best, ...countsOf(query, matches.facets) };
  }

  private recent(matches: Matches, query: Query, position: Position | undefined): IndexedPage {
    let from = 0;
    if (position?.kind === "recent") {
      // The first match past the cursor: the numbers are in that order.
      const cursor = { publishedUs: Date.parse(position.publishedAt) * 1000, ...position.key };
      let high = matches.numbers.length;
      while (from < high) {
        const mid = (from + high) >> 1;
        if (newestFirst(this.store.doc(matches.numbers[mid])!, cursor as Doc) <= 0) from = mid + 1;
        else high = mid;
      }
    }
    const rows = [...matches.numbers.subarray(from, from + query.limit + 1)].map((number) => ({ number, score: 0 }));
    return { rows, ...countsOf(query, matches.facets) };
  }

  /**
   * Titles for q (folded as PostgreSQL folds titles): those beginning with q first, then those with a word beginning
   * with q, newest first in each (short q: beginnings only). Undefined when none: the typo tier is PostgreSQL's.
   */
  suggest(viewer: Viewer, query: Query, folded: string, position: Position | undefined): IndexedPage | undefined {
    const key = JSON.stringify(["suggest", viewer.keys, query.owner, query.type, query.filters, query.counted, folded]);
    const matches = this.cached(key, () => this.suggestions(viewer, query, folded));
    if (matches.numbers.length === 0) return undefined;
    const rows: { number: number; score: number }[] = [];
    for (let i = 0; i < matches.numbers.length && rows.length <= query.limit; i++) {
      const number = matches.numbers[i];
      const score = matches.scores![i];
      if (position?.kind === "suggested" && !after(score, this.store.doc(number)!, position.score, position.key))
        continue;
      rows.push({ number, score });
    }
    return { rows, ...countsOf(query, matches.facets) };
  }

  private suggestions(viewer: Viewer, query: Query, folded: string): Matches {
    const short = (query.q.match(/[\p{L}\p{N}]/gu)?.length ?? 0) < 3;
    const lead = /^[\p{L}\p{N}]+/u.exec(folded)?.[0];
    const candidates = this.store.candidates(query);
    const scoped = lead === undefined ? candidates : intersect(candidates, this.store.titled(lead.slice(0, 3)));
    const found: [number, Doc, number][] = [];
    for (const [number, doc] of this.visible(viewer, query, scoped)) {
      const tier = doc.titleFolded.startsWith(folded) ? 2 : !short && wordBeginsWith(doc.titleFolded, folded) ? 1 : 0;
      if (tier > 0) found.push([number, doc, tierScore(tier, doc.publishedUs)]);
    }
    found.sort((a, b) => b[2] - a[2] || byKey(a[1], b[1]));
    const facets = this.counts(query, found);
    return {
      version: this.store.version,
      numbers: Uint32Array.from(found, ([n]) => n),
      scores: Float64Array.from(found, ([, , s]) => s),
      facets,
    };
  }

  /** The live documents among the numbers the viewer may see, of the query's type. */
  private visible(viewer: Viewer, query: Query, numbers: Uint32Array): [number, Doc][] {
    const docs: [number, Doc][] = [];
    for (const number of numbers) {
      const doc = this.store.doc(number);
      if (doc && visibleTo(doc, viewer) && (query.type === undefined || doc.type === query.type))
        docs.push([number, doc]);
    }
    return docs;
  }

  /** The counted keys' top values over every match, most frequent first, then by value. */
  private counts(query: Query, docs: readonly (readonly [number, Doc, ...unknown[]])[]): SearchPage["facets"] {
    const facets = emptyCounts(query);
    if (query.counted.length === 0) return facets;
    const tally = new Map<number, number>();
    for (const [, doc] of docs) for (const pair of this.store.pairsOf(doc)) tally.set(pair, (tally.get(pair) ?? 0) + 1);
    for (const [pair, count] of tally) {
      const name = this.store.pairNames[pair];
      const split = name.indexOf("=");
      facets[name.slice(0, split)]?.push({ value: name.slice(split + 1), count: BigInt(count) });
    }
    for (const key of query.counted) {
      facets[key].sort((a, b) => Number(b.count - a.count) || (a.value < b.value ? -1 : 1));
      facets[key].length = Math.min(facets[key].length, QUERY_LIMITS.facetValues);
    }
    return facets;
  }

  private cached(key: string, compute: () => Matches): Matches {
    const hit = this.cache.get(key);
    if (hit && hit.version === this.store.version) return hit;
    if (hit) this.forget(key, hit);
    const matches = compute();
    if (this.cache.size >= CACHED || this.cachedNumbers + matches.numbers.length > CACHED_NUMBERS) {
      for (const [old, entry] of this.cache) {
        this.forget(old, entry);
        if (this.cache.size < CACHED / 2 && this.cachedNumbers + matches.numbers.length <= CACHED_NUMBERS) break;
      }
    }
    this.cache.set(key, matches);
    this.cachedNumbers += matches.numbers.length;
    return matches;
  }

  private forget(key: string, entry: Matches): void {
    this.cache.delete(key);
    this.cachedNumbers -= entry.numbers.length;
  }
}

const emptyCounts = (query: Query): SearchPage["facets"] => Object.fromEntries(query.counted.map((key) => [key, []]));

/** Counts as a page carries them: a copy (pages never share the cache's lists), exact. */
const countsOf = (query: Query, facets: SearchPage["facets"]) => ({
  facets: Object.fromEntries(Object.entries(facets).map(([key, values]) => [key, [...values]])),
  countsAtLeast: false,
});

/** Past a cursor of score and key: a lower score, or the same and a later key. */
function after(score: number, doc: Doc, cursorScore: number, key: DocumentKey): boolean {
  return score < cursorScore || (score === cursorScore && byKey(doc, key) > 0);
}

/** PostgreSQL's `(^|[^[:alnum:]])q`: q where a title begins or after a character not a letter or digit. */
export function wordBeginsWith(title: string, q: string): boolean {
  for (let at = title.indexOf(q); at >= 0; at = title.indexOf(q, at + 1))
    if (at === 0 || !ALNUM.test(title[at - 1])) return true;
  return false;
}
