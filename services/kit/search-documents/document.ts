import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type IndexDocument, IndexDocumentSchema } from "../../../gen/pf/search/v1/documents_pb.js";

/** What an owner says of a document everyone may find; the rest of `search.index-document@1` is the builder's. */
export interface PublicDocument {
  title: string;
  body: string;
  /** An absolute http(s) URL; none when unset. */
  url?: string;
  /** BCP 47; none when unset. */
  lang?: string;
  /** Facet values by key (keys `[a-z0-9_-]`). */
  facets?: Record<string, string[]>;
  /** Recency ranks by it. */
  publishedAt: Date;
}

/**
 * A published document everyone may see, as search takes it (the generated `IndexDocument`, stored as its JSON in
 * the owner's `search_documents` table). Every owner's documents are public: one builder, so none writes the shape.
 */
export function publicDocument(parts: PublicDocument): IndexDocument {
  return create(IndexDocumentSchema, {
    title: parts.title,
    body: parts.body,
    url: parts.url ?? "",
    lang: parts.lang ?? "",
    public: true,
    published: true,
    facets: Object.fromEntries(Object.entries(parts.facets ?? {}).map(([key, values]) => [key, { values }])),
    publishedAt: timestampFromDate(parts.publishedAt),
  });
}

/** One write the relay sends: a document at a revision, or its tombstone. */
export interface DocumentWrite {
  type: string;
  id: string;
  revision: number;
  deleted: boolean;
  document?: IndexDocument;
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
  describe(em: EntityManager, ids: string[], at: Date): Promise<Map<string, IndexDocument>>;
  /**
   * A page of the ids that may have a document, after `after` ("" first) in the source's own order, for the
   * sweep that brings every document up to date (new fields, time passing, documents older than the wiring).
   */
  ids(em: EntityManager, after: string, limit: number): Promise<string[]>;
}
