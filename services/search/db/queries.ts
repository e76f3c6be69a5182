import type { DocumentKey, Position, Query } from "../domain/query.js";
import { QUERY_LIMITS, RECENCY_HALF_DAYS } from "../domain/query.js";
import type { Viewer } from "../domain/visibility.js";
import type { FoundDocument, SearchPage, SuggestedTitle } from "../engine/engine.js";
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

const after = (key: DocumentKey, params: Params) =>
  `(m.owner, m.type, m.id) > (${params.add(key.owner)}, ${params.add(key.type)}, ${params.add(key.id)})`;

/**
 * A page of results and the facet counts in one statement over the matching
 * visible documents (`m`). With words: ranked by cover density (title A above
 * body B) times a recency boost measured from the query's reference time, so
 * a cursor's scores hold on every page; without: newest first.
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
  let score = "0::float8";
  let from = `${tables.documents} d`;
  if (ranked) {
    from += `, websearch_to_tsquery(${params.add(query.config)}::regconfig, public.unaccent(${params.add(query.q)})) as q`;
    where.push("d.tsv @@ q");
    const age = `greatest(0, extract(epoch from (${params.add(at)}::timestamptz - d.published_at)) / 86400)`;
    score = `(ts_rank_cd(d.tsv, q, 32) * (1 + 1 / (1 + ${age} / ${RECENCY_HALF_DAYS})))::float8`;
  }
  const order = ranked ? "m.score desc, m.owner, m.type, m.id" : "m.published_at desc, m.owner, m.type, m.id";
  let cursor = "true";
  if (position?.kind === "ranked") {
    const s = params.add(position.score);
    cursor = `(m.score < ${s}::float8 or (m.score = ${s}::float8 and ${after(position.key, params)}))`;
  } else if (position?.kind === "recent") {
    const p = params.add(position.publishedAt);
    cursor = `(m.published_at < ${p}::timestamptz or (m.published_at = ${p}::timestamptz and ${after(position.key, params)}))`;
  }
  const counted = query.counted.length > 0 ? params.add(query.counted) : undefined;
  const counts = counted
    ? `(select coalesce(jsonb_agg(jsonb_build_array(c.k, c.v, c.n)), '[]') from (
         select k, v, n, row_number() over (partition by k order by n desc, v) as rank from (
           select split_part(p, '=', 1) as k, substr(p, strpos(p, '=') + 1) as v, count(*) as n
           from m, unnest(m.facet_pairs) as p where split_part(p, '=', 1) = any(${counted}::text[]) group by p) f
         ) c where c.rank <= ${QUERY_LIMITS.facetValues})`
    : `'[]'::jsonb`;
  // Counted: every match is read once for the page and the counts; otherwise the page alone (an index may order it).
  const sql = `with m as ${counted ? "materialized" : "not materialized"} (
      select ${SHOWN}, left(d.body, 300) as body, d.facet_pairs, ${score} as score
      from ${from} where ${where.join(" and ")})
    select (select coalesce(jsonb_agg(to_jsonb(r) - 'facet_pairs'), '[]') from (
        select * from m where ${cursor} order by ${order} limit ${params.add(query.limit + 1)}) r) as rows,
      ${counts} as counts`;
  const [answer] = await tables.run<{ rows: Shown[]; counts: [string, string, number][] }>(sql, params.values);
  const facets: SearchPage["facets"] = Object.fromEntries(query.counted.map((key) => [key, []]));
  for (const [key, value, count] of answer.counts) facets[key].push({ value, count: BigInt(count) });
  for (const key of query.counted)
    facets[key].sort((a, b) => Number(b.count - a.count) || (a.value < b.value ? -1 : 1));
  return { rows: answer.rows.map(foundOf), facets };
}

/**
 * Titles like q among visible documents: those starting with it first, then
 * by trigram word similarity (the trigram index finds both).
 */
export async function suggestTitles(
  tables: Tables,
  viewer: Viewer,
  query: Query,
  position: Position | undefined,
): Promise<SuggestedTitle[]> {
  const params = new Params();
  const where = visibleWhere(viewer, query, params);
  const folded = `lower(public.unaccent(${params.add(query.q)}))`;
  const prefix = `d.title_folded like replace(replace(replace(${folded}, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`;
  where.push(`(${prefix} or ${folded} operator(public.<%) d.title_folded)`);
  const score = `((case when ${prefix} then 1 else 0 end) + public.word_similarity(${folded}, d.title_folded))::float8`;
  let cursor = "true";
  if (position?.kind === "suggested") {
    const s = params.add(position.score);
    cursor = `(m.score < ${s}::float8 or (m.score = ${s}::float8 and ${after(position.key, params)}))`;
  }
  return tables.run<SuggestedTitle>(
    `select * from (select d.owner, d.type, d.id, d.title, d.url, ${score} as score from ${tables.documents} d
       where ${where.join(" and ")}) m
     where ${cursor} order by m.score desc, m.owner, m.type, m.id limit ${params.add(query.limit + 1)}`,
    params.values,
  );
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
