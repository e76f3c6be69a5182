import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * A document as its owner wants search to hold it (`search.index-document@1`), stored as JSON in the owner's
 * `search_documents` table. Who may see it: everyone when `public`; otherwise the subjects, groups, entitlements
 * or roles `access` names. Unpublished documents are never returned by search.
 */
export interface SearchDocument {
  title: string;
  body: string;
  /** An absolute http(s) URL, "" for none. */
  url: string;
  /** BCP 47, "" for none. */
  lang: string;
  access: string[];
  public: boolean;
  published: boolean;
  /** Facet values by key (keys `[a-z0-9_-]`). */
  facets: Record<string, string[]>;
  /** RFC 3339; recency ranks by it. */
  publishedAt?: string;
}

/** One write the relay sends: a document at a revision, or its tombstone. */
export interface DocumentWrite {
  type: string;
  id: string;
  revision: number;
  deleted: boolean;
  document?: SearchDocument;
}

/** What search made of one write. */
export type WriteOutcome =
  | { outcome: "applied" }
  /** Search holds `currentRevision` (this one or newer) already. */
  | { outcome: "stale"; currentRevision: number }
  /** Invalid: sending it again will not help until the document changes. */
  | { outcome: "rejected"; reason: string };

/** What search holds of one of the owner's documents (its inventory). */
export interface HeldDocument {
  type: string;
  id: string;
  revision: number;
  deleted: boolean;
}

/**
 * The search service as an owner sees it: a batch write and its inventory. The relay and reconciliation depend only
 * on this (`connect-index.ts` is the one over the search service's client), so tests put a fake in its place.
 */
export interface SearchIndex {
  /** Answers one outcome per write, in order; throws when search cannot take the batch (down, or refused whole). */
  write(writes: DocumentWrite[]): Promise<WriteOutcome[]>;
  /** A page of what search holds of the owner's documents, tombstones included; `nextCursor` "" on the last. */
  inventory(cursor: string): Promise<{ documents: HeldDocument[]; nextCursor: string }>;
}

/**
 * One kind of document an owner puts in search (coupons' `coupon`, deals' `offer`): how its desired state is read
 * from the owner's own tables. Its SQL lives in the owner's `db/`.
 */
export interface SearchDocumentSource {
  /** The document type in search (`[a-z0-9_.-]`). */
  type: string;
  /**
   * The documents these ids should be in search at `at` (the owner's clock), read in `em`'s transaction; an id left
   * out should not be.
   */
  describe(em: EntityManager, ids: string[], at: Date): Promise<Map<string, SearchDocument>>;
  /**
   * A page of the ids that may have a document, after `after` ("" first) in the source's own order, for the
   * sweep that brings every document up to date (new fields, time passing, documents older than the wiring).
   */
  ids(em: EntityManager, after: string, limit: number): Promise<string[]>;
}
