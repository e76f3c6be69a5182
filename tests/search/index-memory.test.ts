import { describe, expect, it } from "vitest";
import { checkQuery } from "../../services/search/domain/query.js";
import { PUBLIC_VIEW } from "../../services/search/domain/visibility.js";
import { Answers, recencyBoost, tierScore, wordBeginsWith } from "../../services/search/memory/answers.js";
import { parseQuery, parseVector, Unanswered } from "../../services/search/memory/lexemes.js";
import { difference, intersect, Postings, union } from "../../services/search/memory/postings.js";
import { coverDensity } from "../../services/search/memory/rank.js";
import { Store, titlePrefixes } from "../../services/search/memory/store.js";

const list = (...ids: number[]) => Uint32Array.from(ids);

describe("posting lists", () => {
  it("grow sorted, and intersect, unite and subtract in one pass", () => {
    const postings = new Postings();
    for (let id = 0; id < 100; id += 3) postings.add(id);
    expect(postings.length).toBe(34);
    expect([...intersect(postings.view(), list(0, 1, 9, 50, 51, 99))]).toEqual([0, 9, 51, 99]);
    expect([...intersect(list(5), list(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11))]).toEqual([5]);
    expect([...union(list(1, 3, 5), list(2, 3, 6))]).toEqual([1, 2, 3, 5, 6]);
    expect([...difference(list(1, 2, 3, 4), list(2, 4, 9))]).toEqual([1, 3]);
  });
});

describe("PostgreSQL's text forms", () => {
  it("read a tsvector: lexemes, positions and weights (A 3 … D 0)", () => {
    const vector = parseVector(`'coffe':2A,7B 'it''s':5 'x\\\\y' 'deal':3C`);
    expect([...vector.keys()]).toEqual(["coffe", "it's", "x\\y", "deal"]);
    expect(vector.get("coffe")).toEqual([(3 << 14) | 2, (2 << 14) | 7]);
    expect(vector.get("it's")).toEqual([5]);
    expect(vector.get("x\\y")).toEqual([]);
    expect(vector.get("deal")).toEqual([(1 << 14) | 3]);
  });

  it("read a tsquery with PostgreSQL's priorities; prefixes and phrases not of words stay with PostgreSQL", () => {
    expect(parseQuery(`'a' & 'b' | !'c'`)).toEqual({
      op: "or",
      left: {
        op: "and",
        left: { op: "word", lexeme: "a", ordinal: 0 },
        right: { op: "word", lexeme: "b", ordinal: 1 },
      },
      right: { op: "not", arg: { op: "word", lexeme: "c", ordinal: 2 } },
    });
    expect(parseQuery(`'a' & ( 'b' | 'c' )`)).toMatchObject({ op: "and", right: { op: "or" } });
    expect(parseQuery("")).toBeUndefined();
    expect(parseQuery(`'a' <-> 'b' <2> 'c'`)).toMatchObject({
      op: "phrase",
      distance: 2,
      left: { op: "phrase", distance: 1, left: { lexeme: "a" }, right: { lexeme: "b" } },
      right: { lexeme: "c" },
    });
    expect(() => parseQuery(`'a' <-> ( 'b' & 'c' )`)).toThrow(Unanswered);
    expect(() => parseQuery(`'a':*`)).toThrow(Unanswered);
  });
});

describe("ranking as ts_rank_cd(tsv, q, 32)", () => {
  // The figures PostgreSQL 15 answers for the same vector and query.
  it.each([
    [`'coffe':2A,7B 'deal':3 'umbrella':1A,5B`, `'umbrella' & 'coffe'`, 0.5816733],
    [`'coffe':2A,7B 'deal':3 'umbrella':1A,5B`, `'umbrella' | !'deal'`, 0.5833333],
    [`'a':1,4C 'b':2B,9 'c':3A`, `'a' & ( 'b' | 'c' )`, 0.34210527],
    [`'a':1`, `'z'`, 0],
    [`'a':1,3,5 'b':2,4,9 'c':6`, `'a' <-> 'b'`, 0.16666667],
  ])("%s @ %s = %d", (vector, query, expected) => {
    const lexemes = parseVector(vector);
    expect(coverDensity(parseQuery(query)!, (lexeme) => lexemes.get(lexeme))).toBeCloseTo(expected, 7);
  });

  it("weighs recency as one exact ratio, and scores suggestion tiers from their decimal", () => {
    expect(recencyBoost(1000, 2000)).toBe(2);
    expect(recencyBoost(30 * 86_400_000_000, 0)).toBe(1.5);
    expect(tierScore(2, 1_780_000_000_123_456)).toBe(Number("2.01780000000123456"));
  });
});

describe("the store", () => {
  const row = (id: string, fields: Partial<Parameters<Store["apply"]>[0]> = {}) => ({
    owner: "o",
    type: "t",
    id,
    revision: "1",
    live: true,
    public: true,
    access: [],
    facetPairs: ["color=red"],
    titleFolded: "red umbrella",
    publishedUs: 1,
    tsv: `'red':1A 'umbrella':2A`,
    ...fields,
  });

  it("replaces a document's version, drops a deleted one, and matches words, filters and not", () => {
    const store = new Store();
    store.apply(row("a"));
    store.apply(row("b", { tsv: `'blue':1A`, facetPairs: ["color=blue"] }));
    store.apply(row("a", { revision: "2", tsv: `'green':1A` }));
    expect(store.holds(row("a", { revision: "2" }))).toBe(true);
    expect(store.live).toBe(2);
    expect(store.dead).toBe(1);
    const ids = (numbers: Uint32Array) => [...numbers].flatMap((n) => store.doc(n)?.id ?? []);
    expect(ids(store.candidates({ filters: [] }, parseQuery(`'green'`)))).toEqual(["a"]);
    expect(ids(store.candidates({ filters: [] }, parseQuery(`'umbrella'`)))).toEqual([]);
    expect(ids(store.candidates({ filters: [] }, parseQuery(`!'green'`)))).toEqual(["b"]);
    expect(ids(store.candidates({ filters: ["color=blue"] }))).toEqual(["b"]);
    store.apply(row("b", { revision: "2", live: false }));
    expect(ids(store.candidates({ filters: [] }))).toEqual(["a"]);
  });

  it("looks titles up by their words' beginnings; q must begin a word", () => {
    expect([...titlePrefixes("café-bar x")]).toEqual(["c", "ca", "caf", "b", "ba", "bar", "x"]);
    expect(wordBeginsWith("red umbrella", "umb")).toBe(true);
    expect(wordBeginsWith("redumbrella", "umb")).toBe(false);
  });
});

describe("answers", () => {
  it("count every match exactly, past the PostgreSQL path's sample: at_least false", () => {
    const store = new Store();
    for (let n = 0; n < 1500; n++)
      store.apply({
        owner: "o",
        type: "t",
        id: `d${n}`,
        revision: "1",
        live: true,
        public: true,
        access: [],
        facetPairs: [`color=${n % 3 === 0 ? "red" : "blue"}`],
        titleFolded: `umbrella ${n}`,
        publishedUs: n,
        tsv: `'umbrella':1A`,
      });
    const query = checkQuery({ q: "umbrella", lang: "", facets: "color", cursor: "", owner: "", type: "", facet: {} });
    const page = new Answers(store).search(PUBLIC_VIEW, query, `'umbrella'`, undefined, new Date(0))!;
    expect(page.countsAtLeast).toBe(false);
    expect(page.facets.color).toEqual([
      { value: "blue", count: 1000n },
      { value: "red", count: 500n },
    ]);
    // Ranked within the newest 1,000 (the rank window: d500 to d1499), equal scores by key.
    expect(page.rows).toHaveLength(21);
    expect(store.doc(page.rows[0].number)?.id).toBe("d1000");
  });
});
