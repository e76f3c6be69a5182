import type { DocumentContent, ValidWrite } from "../domain/documents.js";
import type { DocumentKey, Position, Query } from "../domain/query.js";
import type { Viewer } from "../domain/visibility.js";

/**
 * The index behind search: documents written by their owners (revision-ordered,
 * tombstones kept) and the queries over them, always for a viewer. PostgreSQL
 * full text implements it (db/engine.ts); an OpenSearch or Meilisearch adapter
 * would implement the same, with the revision guard as external versioning.
 */
export interface SearchEngine {
  /** Applies checked writes of one owner in order, each only over an older revision; stale ones are recorded as rejections. */
  write(owner: string, writes: readonly ValidWrite[], at: Date): Promise<WriteAnswer[]>;
  /** Records writes refused before reaching the index (invalid documents). */
  reject(owner: string, refused: readonly RefusedWrite[], at: Date): Promise<void>;
  /** One page of an owner's documents by type then id, tombstones included. */
  inventory(owner: string, page: { type?: string; after?: [string, string]; limit: number }): Promise<HeldDocument[]>;
  /** One of an owner's documents as held (content included), or undefined when never written. */
  held(owner: string, type: string, id: string): Promise<HeldDocument | undefined>;
  /** One page of an owner's rejections, newest first. */
  rejections(owner: string, page: { before?: string; limit: number }): Promise<RejectionRow[]>;
  /** A page of the documents the viewer may see that match, with facet counts over the newest of them (a sample). */
  search(viewer: Viewer, query: Query, after: Position | undefined, at: Date): Promise<SearchPage>;
  /** Titles of visible documents like q, closest first, with facet counts over the first ones suggested (a sample). */
  suggest(viewer: Viewer, query: Query, after: Position | undefined): Promise<SuggestPage>;
  /** One document the viewer may see; undefined for missing, invisible, unpublished and deleted alike. */
  read(viewer: Viewer, key: DocumentKey): Promise<FoundDocument | undefined>;
}

/** What became of one write. */
export interface WriteAnswer {
  outcome: "applied" | "stale";
  /** The revision held after the write. */
  current: bigint;
}

/** A write refused before the index, kept as a rejection. */
export interface RefusedWrite {
  type: string;
  id: string;
  revision: bigint;
  deletion: boolean;
  code: string;
  detail: string;
}

/** A document as its owner reads it back. */
export interface HeldDocument {
  type: string;
  id: string;
  revision: bigint;
  deleted: boolean;
  indexedAt: Date;
  content?: DocumentContent & { publishedAt: Date };
}

/** A rejection as stored. */
export interface RejectionRow extends RefusedWrite {
  rejectionId: string;
  rejectedAt: Date;
}

/** A visible document as a reader sees it. */
export interface FoundDocument extends DocumentKey {
  revision: bigint;
  title: string;
  body: string;
  url: string;
  lang: string;
  public: boolean;
  facets: Record<string, string[]>;
  publishedAt: Date;
  indexedAt: Date;
  score: number;
}

/** A page of results (limit + 1 rows: the extra one says there is a next page) and the counts. */
export interface SearchPage {
  rows: FoundDocument[];
  /** Counts by facet key, then by value, most frequent first. */
  facets: Record<string, { value: string; count: bigint }[]>;
  /** More documents matched than were counted: each count is a lower bound. */
  countsAtLeast: boolean;
}

/** A page of suggestions (limit + 1 rows, as `SearchPage`) and the counts. */
export interface SuggestPage {
  rows: SuggestedTitle[];
  facets: SearchPage["facets"];
  countsAtLeast: boolean;
}

/** A suggested title. */
export interface SuggestedTitle extends DocumentKey {
  title: string;
  url: string;
  score: number;
}
