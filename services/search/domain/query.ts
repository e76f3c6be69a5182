import { FACET_KEY, LIMITS, clean } from "./documents.js";
import { configOf } from "./languages.js";

/** The bounds of one query (README, "Queries"). */
export const QUERY_LIMITS = {
  facetFilters: 10,
  defaultLimit: 20,
  /** Values answered per counted facet key, most frequent first. */
  facetValues: 50,
  /** Matches ranked per query with words: the newest this many (ranking costs about 7 µs a match). */
  rankWindow: 1000,
} as const;

/** A query's parameters as they arrive (search.query@1). */
export interface QueryInput {
  q: string;
  lang: string;
  facets: string;
  limit?: number;
  cursor: string;
  owner: string;
  type: string;
  facet: Record<string, string>;
}

/** A checked query: what the engine runs. */
export interface Query {
  /** The words, NUL-free and trimmed; "" lists by recency. */
  q: string;
  /** The text-search configuration of `lang`. */
  config: string;
  /** Facet keys to count. */
  counted: string[];
  /** `key=value` pairs every result carries. */
  filters: string[];
  owner?: string;
  type?: string;
  limit: number;
}

/** A 400 naming the field at fault. */
export class QueryFault extends Error {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * Checks a query's parameters; throws a QueryFault naming the first field at
 * fault. The contract holds `q` to 1000 characters, `facets` to 10 facet keys,
 * `lang` to a language tag, `owner` to a service slug, `type` to a document
 * type and `limit` to 1–200 before this runs; no rule holds the map `facet`.
 */
export function checkQuery(input: QueryInput): Query {
  const q = clean(input.q).trim();
  const counted = input.facets === "" ? [] : [...new Set(input.facets.split(",").map((key) => key.trim()))];
  const filters = Object.entries(input.facet);
  if (filters.length > QUERY_LIMITS.facetFilters)
    throw new QueryFault("facet", `at most ${QUERY_LIMITS.facetFilters} facet.<key> filters.`);
  for (const [key, value] of filters) {
    if (!FACET_KEY.test(key)) throw new QueryFault(`facet.${key}`, "facet keys are 1 to 64 of a-z 0-9 _ -.");
    if (clean(value).trim() === "" || value.length > LIMITS.facetValue)
      throw new QueryFault(`facet.${key}`, `a facet value is 1 to ${LIMITS.facetValue} characters.`);
  }
  if (input.type !== "" && input.owner === "")
    throw new QueryFault("type", "type is a document type of the owner given: owner is required with it.");
  const limit = input.limit ?? QUERY_LIMITS.defaultLimit;
  return {
    q,
    config: configOf(input.lang),
    counted,
    filters: filters.map(([key, value]) => `${key}=${clean(value).trim()}`).sort(),
    owner: input.owner || undefined,
    type: input.type || undefined,
    limit,
  };
}

/** A document's key: the tie-breaker of every order. */
export interface DocumentKey {
  owner: string;
  type: string;
  id: string;
}

/**
 * Where a page ends. Ranked pages: the reference time every page of the query
 * ranks recency against (so scores never move between pages), the last score
 * and key. Recency pages: the last published_at and key. Suggestions: the
 * last similarity and key.
 */
export type Position =
  | { kind: "ranked"; at: string; score: number; key: DocumentKey }
  | { kind: "recent"; publishedAt: string; key: DocumentKey }
  | { kind: "suggested"; score: number; key: DocumentKey };

/** The opaque cursor of a position. */
export function encodePosition(position: Position): string {
  const { key } = position;
  const head =
    position.kind === "ranked"
      ? ["r", position.at, position.score]
      : position.kind === "recent"
        ? ["t", position.publishedAt]
        : ["s", position.score];
  return Buffer.from(JSON.stringify([...head, key.owner, key.type, key.id])).toString("base64url");
}

/** A cursor this service issued for this kind of page, or a QueryFault naming `cursor`. */
export function decodePosition(cursor: string, kind: Position["kind"]): Position | undefined {
  if (cursor === "") return undefined;
  const fault = new QueryFault("cursor", "cursor is not one this service issued for this query.");
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, "base64url").toString());
  } catch {
    throw fault;
  }
  if (!Array.isArray(parts)) throw fault;
  const size = kind === "ranked" ? 6 : 5;
  const keyParts = parts.slice(-3);
  if (parts.length !== size || !keyParts.every((part) => typeof part === "string")) throw fault;
  const key = { owner: keyParts[0] as string, type: keyParts[1] as string, id: keyParts[2] as string };
  const time = (value: unknown) => typeof value === "string" && !Number.isNaN(Date.parse(value));
  const score = (value: unknown) => typeof value === "number" && Number.isFinite(value);
  if (kind === "ranked" && parts[0] === "r" && time(parts[1]) && score(parts[2]))
    return { kind, at: parts[1] as string, score: parts[2] as number, key };
  if (kind === "recent" && parts[0] === "t" && time(parts[1])) return { kind, publishedAt: parts[1] as string, key };
  if (kind === "suggested" && parts[0] === "s" && score(parts[1])) return { kind, score: parts[1] as number, key };
  throw fault;
}

/** How far recency weighs: a document this many days old keeps half its recency boost. */
export const RECENCY_HALF_DAYS = 30;
