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
 * A page of results and the facet counts in one statement. `m` holds the keys of the matching visible documents
 * (narrow rows: ranking and display read the table again only for the rows they need). With words: the newest
 * `rankWindow` matches are ranked by cover density (title A above body B) times a recency boost measured from the
 * query's reference time, so a cursor's scores hold on every page; older matches of a broad query are not paged
 * (ranking every one of 40,000 matches cost 300 ms). Without words: newest first. Counts cover every match.
 */
export async function searchDocuments(
  tables: Tables,
  viewer: Viewer,
  query: Query,
  position: Position | undefined,
  at: Date,
): Promise<SearchPage> {
  const params = new Params();
  const where = visibleWhere(viewer, query, params);
  const ranked = query.q !== "";
  const counted = query.counted.length > 0 ? params.add(query.counted) : undefined;
  let words = "";
  let from = `${tables.documents} d`;
  if (ranked) {
    // The query's words once, never per row (a stable function in a select list runs per row).
    words = `q as materialized (select websearch_to_tsquery(${params.add(query.config)}::regconfig,
      public.unaccent(${params.add(query.q)})) as q),`;
    from += ", q";
    where.push("d.tsv @@ q.q");
  }
  const matches = `m as ${counted ? "materialized" : "not materialized"} (
    select d.owner, d.type, d.id, d.published_at, d.facet_pairs from ${from} where ${where.join(" and ")})`;
  let candidates: string;
  let order: string;
  let cursor = "true";
  if (ranked) {
    const age = `greatest(0, extract(epoch from (${params.add(at)}::timestamptz - d.published_at)) / 86400)`;
    candidates = `c as (select w.owner, w.type, w.id, w.published_at,
        (ts_rank_cd(d.tsv, q.q, 32) * (1 + 1 / (1 + ${age} / ${RECENCY_HALF_DAYS})))::float8 as score
      from (select * from m order by published_at desc, owner, type, id limit ${QUERY_LIMITS.rankWindow}) w
      join ${tables.documents} d using (owner, type, id), q)`;
    order = "c.score desc, c.owner, c.type, c.id";
    if (position?.kind === "ranked") {
      const s = params.add(position.score);
      cursor = `(c.score < ${s}::float8 or (c.score = ${s}::float8 and ${after(position.key, params, "c")}))`;
    }
  } else {
    candidates = `c as not materialized (select m.owner, m.type, m.id, m.published_at, 0::float8 as score from m)`;
    order = "c.published_at desc, c.owner, c.type, c.id";
    if (position?.kind === "recent") {
      const p = params.add(position.publishedAt);
      cursor = `(c.published_at < ${p}::timestamptz or (c.published_at = ${p}::timestamptz and ${after(position.key, params, "c")}))`;
    }
  }
  const sql = `with ${words} ${matches}, ${candidates}
    select (select coalesce(jsonb_agg(to_jsonb(r)), '[]') from (
        select ${SHOWN}, left(d.body, 300) as body, p.score
        from (select * from c where ${cursor} order by ${order} limit ${params.add(query.limit + 1)}) p
        join ${tables.documents} d using (owner, type, id) order by ${order.replaceAll("c.", "p.")}) r) as rows,
      ${countsOver(counted)} as counts`;
  const [answer] = await tables.run<{ rows: Shown[]; counts: Counted[] }>(sql, params.values);
  return { rows: answer.rows.map(foundOf), facets: facetsOf(query, answer.counts) };
}

/** One counted facet value as a statement answers it: key, value, documents. */
type Counted = [string, string, number];

/**
 * The facet counts over the matches `m` (a CTE with their `facet_pairs`), or none when no key is counted (`counted`:
 * the parameter holding the keys): the top values of each key, as `Counted` rows in one JSON array. Pairs are grouped
 * first and split after: 62 groups, not 80,000 pairs.
 */
function countsOver(counted: string | undefined): string {
  if (counted === undefined) return `'[]'::jsonb`;
  return `(select coalesce(jsonb_agg(jsonb_build_array(c.k, c.v, c.n)), '[]') from (
      select k, v, n, row_number() over (partition by k order by n desc, v) as rank from (
        select split_part(p, '=', 1) as k, substr(p, strpos(p, '=') + 1) as v, n
        from (select p, count(*) as n from m, unnest(m.facet_pairs) as p group by p) g) f
      where k = any(${counted}::text[])) c where c.rank <= ${QUERY_LIMITS.facetValues})`;
}

/** The counts by key, most frequent first; every counted key answers, with no values when none matched. */
function facetsOf(query: Query, counts: Counted[]): SearchPage["facets"] {
  const facets: SearchPage["facets"] = Object.fromEntries(query.counted.map((key) => [key, []]));
  for (const [key, value, count] of counts) facets[key].push({ value, count: BigInt(count) });
  for (const key of query.counted)
    facets[key].sort((a, b) => Number(b.count - a.count) || (a.value < b.value ? -1 : 1));
  return facets;
}

/**
 * Titles for q among visible documents: those with a word starting with q (the trigram index finds them; a q of
 * fewer than three letters or digits, too short for trigrams, finds titles starting with it in the prefix index),
 * titles starting with q first, then newest first; only when no title has such a word, titles like q by trigram
 * word similarity (a typo), most similar first. The score carries the order (tier plus recency, or similarity), so
 * the cursor's score and key hold on every page. Facet counts (facets=) cover every document suggested.
 */
export async function suggestTitles(
  tables: Tables,
  viewer: Viewer,
  query: Query,
  position: Position | undefined,
): Promise<SuggestPage> {
  const params = new Params();
  const where = visibleWhere(viewer, query, params);
  const counted = query.counted.length > 0 ? params.add(query.counted) : undefined;
  const folded = `lower(public.unaccent(${params.add(query.q)}))`;
  // Every character but letters, digits and spaces is escaped: q is matched literally.
  const literal = `regexp_replace(s.f, '([^[:alnum:][:space:]])', '\\\\\\1', 'g')`;
  const startsWith = `d.title_folded ~ ('^' || ${literal})`;
  // A range of the prefix index (byte-wise, as text_pattern_ops orders), found at run time from the folded q.
  const prefixed = `d.title_folded ~>=~ s.f and d.title_folded ~<~ (s.f || chr(1114111))`;
  const words =
    (query.q.match(/[\p{L}\p{N}]/gu)?.length ?? 0) >= 3
      ? `d.title_folded ~ ('(^|[^[:alnum:]])' || ${literal})`
      : prefixed;
  const recency = `extract(epoch from d.published_at) / 1e11`;
  let cursor = "true";
  if (position?.kind === "suggested") {
    const score = params.add(position.score);
    cursor = `(t.score < ${score}::float8 or (t.score = ${score}::float8 and ${after(position.key, params, "t")}))`;
  }
  const [answer] = await tables.run<{ rows: SuggestedTitle[]; counts: Counted[] }>(
    `with s as materialized (select ${folded} as f),
     words as (select d.owner, d.type, d.id, d.title, d.url, d.facet_pairs,
         ((case when ${startsWith} then 2 else 1 end) + ${recency})::float8 as score
       from ${tables.documents} d, s where ${where.join(" and ")} and ${words}),
     alike as (select d.owner, d.type, d.id, d.title, d.url, d.facet_pairs,
         public.word_similarity(s.f, d.title_folded)::float8 as score
       from ${tables.documents} d, s
       where ${where.join(" and ")} and s.f operator(public.<%) d.title_folded and not exists (select from words)),
     m as ${counted ? "materialized" : "not materialized"} (select * from words union all select * from alike)
     select (select coalesce(jsonb_agg(to_jsonb(r)), '[]') from (
         select t.owner, t.type, t.id, t.title, t.url, t.score from m t
         where ${cursor} order by t.score desc, t.owner, t.type, t.id limit ${params.add(query.limit + 1)}) r) as rows,
       ${countsOver(counted)} as counts`,
    params.values,
  );
  return { rows: answer.rows, facets: facetsOf(query, answer.counts) };
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
