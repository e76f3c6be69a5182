import type { DocumentKey, Position, Query } from "../domain/query.js";
import { QUERY_LIMITS, RECENCY_HALF_DAYS } from "../domain/query.js";
import type { Viewer } from "../domain/visibility.js";
import type { FoundDocument, SearchPage, SuggestedTitle, SuggestPage } from "../engine/engine.js";
import type { Tables } from "./sql.js";

/** Parameters of one statement, numbered as they are added. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    return `$${this.values.push(value)}`;
  }
}

/**
 * What every answer is limited to: published, live documents the viewer may
 * see (public, or naming one of the viewer's keys), then the query's owner,
 * type and facet filters. Counts and suggestions read through it too.
 */
function visibleWhere(viewer: Viewer, query: Pick<Query, "owner" | "type" | "filters">, params: Params): string[] {
  const where = ["d.published", "not d.deleted"];
  where.push(viewer.keys.length === 0 ? "d.public" : `(d.public or d.access && ${params.add(viewer.keys)}::text[])`);
  if (query.owner !== undefined) where.push(`d.owner = ${params.add(query.owner)}`);
  if (query.type !== undefined) where.push(`d.type = ${params.add(query.type)}`);
  if (query.filters.length > 0) where.push(`d.facet_pairs @> ${params.add(query.filters)}::text[]`);
  return where;
}

const SHOWN = `d.owner, d.type, d.id, d.revision::text as revision, d.title, d.url, d.lang, d.public, d.facets,
  d.published_at, d.indexed_at`;

type Shown = Omit<FoundDocument, "revision" | "publishedAt" | "indexedAt" | "body" | "score"> & {
  revision: string;
  published_at: string;
  indexed_at: string;
  body: string;
  score: number;
};

const foundOf = (row: Shown): FoundDocument => ({
  owner: row.owner,
  type: row.type,
  id: row.id,
  revision: BigInt(row.revision),
  title: row.title,
  body: row.body,
  url: row.url,
  lang: row.lang,
  public: row.public,
  facets: row.facets,
  publishedAt: new Date(row.published_at),
  indexedAt: new Date(row.indexed_at),
  score: row.score,
});

const after = (key: DocumentKey, params: Params, alias = "m") =>
  `(${alias}.owner, ${alias}.type, ${alias}.id) > (${params.add(key.owner)}, ${params.add(key.type)}, ${params.add(key.id)})`;

/**
 * The query's words as a tsquery's text, computed in a statement of its own: the main statement then holds a
 * constant, which the planner can estimate (a common word walks the recency index and stops at the window, a rare
 * one reads its few matches from the word index) and which is never computed per row.
 */
export async function wordsOf(tables: Tables, query: Query): Promise<string> {
  const [row] = await tables.run<{ q: string }>(
    `select websearch_to_tsquery($1::regconfig, public.unaccent($2))::text as q`,
    [query.config, query.q],
  );
  return row.q;
}

/**
 * A page of results and the facet counts. `s`, the sample: the newest `rankWindow` matching visible documents (one
 * more says whether there are more). With words: the sample is ranked by cover density (title A above body B)
 * times a recency boost measured from the query's reference time, so a cursor's scores hold on every page; older
 * matches of a broad query are not paged. Without words: newest first over every match, the sample only counted.
 * Counts cover the sample: exact when it holds every match, else each a lower bound (`countsAtLeast`).
 */
export async function searchDocuments(
  tables: Tables,
  viewer: Viewer,
  query: Query,
  position: Position | undefined,
  at: Date,
): Promise<SearchPage> {
  const tsquery = query.q === "" ? undefined : await wordsOf(tables, query);
  const params = new Params();
  const where = visibleWhere(viewer, query, params);
  const counted = query.counted.length > 0 ? params.add(query.counted) : undefined;
  const words = tsquery === undefined ? "" : params.add(tsquery);
  if (words) where.push(`d.tsv @@ ${words}::tsquery`);
  // With a facet filter and the RUM index, the filter's newest matches come in order from it (ties in any order).
  const newest =
    query.filters.length > 0 && (await tables.ordersFacets())
      ? `order by d.published_at operator(public.<=|) '3000-01-01'::timestamptz`
      : "order by d.published_at desc, d.owner, d.type, d.id";
  const sample = `s as materialized (select d.owner, d.type, d.id, d.published_at, d.facet_pairs${words ? ", d.tsv" : ""}
    from ${tables.documents} d where ${where.join(" and ")} ${newest} limit ${QUERY_LIMITS.rankWindow + 1})`;
  let candidates: string;
  let order: string;
  let cursor = "true";
  if (words) {
    const age = `greatest(0, extract(epoch from (${params.add(at)}::timestamptz - w.published_at)) / 86400)`;
    candidates = `c as (select w.owner, w.type, w.id, w.published_at,
        (ts_rank_cd(w.tsv, ${words}::tsquery, 32) * (1 + 1 / (1 + ${age} / ${RECENCY_HALF_DAYS})))::float8 as score
      from (select * from s order by published_at desc, owner, type, id limit ${QUERY_LIMITS.rankWindow}) w)`;
    order = "c.score desc, c.owner, c.type, c.id";
    if (position?.kind === "ranked") {
      const score = params.add(position.score);
      cursor = `(c.score < ${score}::float8 or (c.score = ${score}::float8 and ${after(position.key, params, "c")}))`;
    }
  } else {
    // The page walks the recency index past the cursor, over every match: listings page to the end.
    candidates = `c as not materialized (select d.owner, d.type, d.id, d.published_at, 0::float8 as score
      from ${tables.documents} d where ${where.join(" and ")})`;
    order = "c.published_at desc, c.owner, c.type, c.id";
    if (position?.kind === "recent") {
      const p = params.add(position.publishedAt);
      cursor = `(c.published_at < ${p}::timestamptz or (c.published_at = ${p}::timestamptz and ${after(position.key, params, "c")}))`;
    }
  }
  const sampled = words || counted;
  const sql = `with ${sampled ? `${sample},` : ""} ${candidates}
    select (select coalesce(jsonb_agg(to_jsonb(r)), '[]') from (
        select ${SHOWN}, left(d.body, 300) as body, p.score
        from (select * from c where ${cursor} order by ${order} limit ${params.add(query.limit + 1)}) p
        join ${tables.documents} d using (owner, type, id) order by ${order.replaceAll("c.", "p.")}) r) as rows,
      ${countsOver(counted, `select facet_pairs from s order by published_at desc, owner, type, id limit ${QUERY_LIMITS.rankWindow}`)} as counts,
      ${counted ? `(select count(*) from s) > ${QUERY_LIMITS.rankWindow}` : "false"} as more`;
  const [answer] = await tables.run<{ rows: Shown[]; counts: Counted[]; more: boolean }>(sql, params.values);
  return { rows: answer.rows.map(foundOf), ...facetsOf(query, answer.counts, answer.more) };
}

/** One counted facet value as a statement answers it: key, value, documents. */
type Counted = [string, string, number];

/**
 * The facet counts over `sampled` (a subquery of the counted rows' `facet_pairs`), or none when no key is counted
 * (`counted`: the parameter holding the keys): the top values of each key, as `Counted` rows in one JSON array.
 * Pairs are grouped first and split after: 62 groups, not 2,000 pairs.
 */
function countsOver(counted: string | undefined, sampled: string): string {
  if (counted === undefined) return `'[]'::jsonb`;
  return `(select coalesce(jsonb_agg(jsonb_build_array(c.k, c.v, c.n)), '[]') from (
      select k, v, n, row_number() over (partition by k order by n desc, v) as rank from (
        select split_part(p, '=', 1) as k, substr(p, strpos(p, '=') + 1) as v, n
        from (select p, count(*) as n from (${sampled}) m,
          unnest(m.facet_pairs) as p group by p) g) f
      where k = any(${counted}::text[])) c where c.rank <= ${QUERY_LIMITS.facetValues})`;
}

/**
 * The counts by key, most frequent first; every counted key answers, with no values when none matched. `more`:
 * more documents matched than were counted, so every count is a lower bound.
 */
function facetsOf(query: Query, counts: Counted[], more: boolean): Pick<SearchPage, "facets" | "countsAtLeast"> {
  const facets: SearchPage["facets"] = Object.fromEntries(query.counted.map((key) => [key, []]));
  for (const [key, value, count] of counts) facets[key].push({ value, count: BigInt(count) });
  for (const key of query.counted)
    facets[key].sort((a, b) => Number(b.count - a.count) || (a.value < b.value ? -1 : 1));
  return { facets, countsAtLeast: query.counted.length > 0 && more };
}

/** q folded as titles are, and its patterns (every character but letters, digits and spaces escaped: literal). */
export interface Folded {
  f: string;
  starts: string;
  word: string;
}

/** In a statement of its own, so the suggestion's statement holds constants the planner estimates (as `wordsOf`). */
export async function foldedOf(tables: Tables, q: string): Promise<Folded> {
  const [row] = await tables.run<Folded>(
    `select f, '^' || e as starts, '(^|[^[:alnum:]])' || e as word
     from (select f, regexp_replace(f, '([^[:alnum:][:space:]])', '\\\\\\1', 'g') as e
       from (select lower(public.unaccent($1)) as f) s) x`,
    [q],
  );
  return row;
}

/**
 * Titles for q among visible documents: those with a word starting with q (a q of fewer than three letters or
 * digits: titles starting with it, from the prefix index), titles starting with q first, then newest first; only
 * when no title has such a word, titles like q by trigram word similarity (a typo), most similar first. The score
 * carries the order (tier plus recency, or similarity), so the cursor's score and key hold on every page. Each tier
 * walks the recency index and stops at the page (common words) or reads its few matches by the trigram index (rare
 * ones); a tier's score orders as `published_at` does to within 44 µs (float8 at 2 + epoch / 1e11), so only titles
 * published closer than that could swap across a page boundary. Facet counts (facets=) cover the first `rankWindow` suggestions, exact when there are no more.
 */
export async function suggestTitles(
  tables: Tables,
  viewer: Viewer,
  query: Query,
  position: Position | undefined,
): Promise<SuggestPage> {
  const folded = await foldedOf(tables, query.q);
  const params = new Params();
  const where = visibleWhere(viewer, query, params).join(" and ");
  const counted = query.counted.length > 0 ? params.add(query.counted) : undefined;
  const f = `${params.add(folded.f)}::text`;
  const short = (query.q.match(/[\p{L}\p{N}]/gu)?.length ?? 0) < 3;
  // Too short for trigrams: a range of the prefix index (byte-wise, as text_pattern_ops orders), all titles that start with q.
  const words = short
    ? `d.title_folded ~>=~ ${f} and d.title_folded ~<~ (${f} || chr(1114111))`
    : `d.title_folded ~ ${params.add(folded.word)}::text`;
  const startsWith = short ? words : `d.title_folded ~ ${params.add(folded.starts)}::text`;
  const recency = `extract(epoch from d.published_at) / 1e11`;
  const shown = "d.owner, d.type, d.id, d.title, d.url, d.facet_pairs";
  const newest = "order by d.published_at desc, d.owner, d.type, d.id";
  const positioned = (score: string) => {
    if (position?.kind !== "suggested") return "true";
    const s = params.add(position.score);
    return `(${score} < ${s}::float8 or (${score} = ${s}::float8 and ${after(position.key, params, "d")}))`;
  };
  /** The suggestions in order, at most `limit`, from the position when `paged`. */
  const suggested = (limit: string, paged: boolean) => {
    const cursor = (score: string) => (paged ? positioned(score) : "true");
    const first = `(2 + ${recency})::float8`;
    const second = `(1 + ${recency})::float8`;
    const alike = `public.word_similarity(${f}, d.title_folded)::float8`;
    const tiers = [
      `(select ${shown}, ${first} as score from ${tables.documents} d
        where ${where} and ${startsWith} and ${cursor(first)} ${newest} limit ${limit})`,
      short
        ? ""
        : `(select ${shown}, ${second} as score from ${tables.documents} d
        where ${where} and ${words} and not ${startsWith} and ${cursor(second)} ${newest} limit ${limit})`,
      `(select ${shown}, ${alike} as score from ${tables.documents} d
        where ${where} and ${f} operator(public.<%) d.title_folded and ${cursor(alike)}
          and not exists (select from ${tables.documents} d where ${where} and ${words})
        order by score desc, d.owner, d.type, d.id limit ${limit})`,
    ];
    return `select * from (${tiers.filter(Boolean).join(" union all ")}) t
      order by t.score desc, t.owner, t.type, t.id limit ${limit}`;
  };
  const page = params.add(query.limit + 1);
  const sample = counted ? String(QUERY_LIMITS.rankWindow + 1) : "";
  const [answer] = await tables.run<{ rows: SuggestedTitle[]; counts: Counted[]; more: boolean }>(
    `with ${counted ? `s as materialized (${suggested(sample, false)}),` : ""}
     p as (${suggested(page, true)})
     select (select coalesce(jsonb_agg(jsonb_build_object('owner', p.owner, 'type', p.type, 'id', p.id,
         'title', p.title, 'url', p.url, 'score', p.score) order by p.score desc, p.owner, p.type, p.id), '[]')
         from p) as rows,
       ${countsOver(counted, `select facet_pairs from s order by score desc, owner, type, id limit ${QUERY_LIMITS.rankWindow}`)} as counts,
       ${counted ? `(select count(*) from s) > ${QUERY_LIMITS.rankWindow}` : "false"} as more`,
    params.values,
  );
  return { rows: answer.rows, ...facetsOf(query, answer.counts, answer.more) };
}

/** One visible document, whole, or undefined: missing and invisible alike. */
export async function readDocument(
  tables: Tables,
  viewer: Viewer,
  key: DocumentKey,
): Promise<FoundDocument | undefined> {
  const params = new Params();
  const where = visibleWhere(viewer, { owner: key.owner, type: key.type, filters: [] }, params);
  where.push(`d.id = ${params.add(key.id)}`);
  const [row] = await tables.run<Shown>(
    `select ${SHOWN}, d.body, 0::float8 as score from ${tables.documents} d where ${where.join(" and ")}`,
    params.values,
  );
  return row ? foundOf(row) : undefined;
}

/**
 * The documents of a page the in-memory index found, as results show them, in the keys' order. A document gone or
 * hidden since the index last looked is left out (the index catches up at its next look).
 */
export async function shownDocuments(
  tables: Tables,
  viewer: Viewer,
  keys: readonly DocumentKey[],
): Promise<Map<string, FoundDocument>> {
  if (keys.length === 0) return new Map();
  const rows = await tables.run<Shown>(
    `select ${SHOWN}, left(d.body, 300) as body, 0::float8 as score
     from unnest($1::text[], $2::text[], $3::text[]) as k(owner, type, id)
     join ${tables.documents} d using (owner, type, id)
     where d.published and not d.deleted and (d.public or d.access && $4::text[])`,
    [keys.map((key) => key.owner), keys.map((key) => key.type), keys.map((key) => key.id), viewer.keys],
  );
  return new Map(rows.map((row) => [shownKey(row), foundOf(row)]));
}

export const shownKey = (key: DocumentKey) => `${key.owner}\u0000${key.type}\u0000${key.id}`;
