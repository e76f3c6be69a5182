import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type IndexDocument,
  IndexDocumentSchema,
  type OwnedDocument,
  OwnedDocumentSchema,
  type Rejection,
  RejectionSchema,
  WriteOutcome,
  type WriteResult,
  WriteResultSchema,
} from "../../../gen/pf/search/v1/documents_pb.js";
import {
  type Document,
  DocumentSchema,
  FacetCountSchema,
  type FacetCounts,
  FacetCountsSchema,
} from "../../../gen/pf/search/v1/query_pb.js";
import type { WriteInput } from "./documents.js";
import type { FoundDocument, HeldDocument, RejectionRow, SearchPage, WriteAnswer } from "../engine/engine.js";

/** A proto document's content as the domain checks it. */
export function contentOf(document: IndexDocument | undefined): WriteInput["document"] {
  if (!document) return undefined;
  return {
    title: document.title,
    body: document.body,
    url: document.url,
    lang: document.lang,
    access: document.access,
    public: document.public,
    published: document.published,
    facets: document.facets,
    publishedAt: document.publishedAt ? timestampDate(document.publishedAt) : undefined,
  };
}

/** Facet counts as a query or a suggestion answers them, by key, each flagged when its counts are lower bounds. */
export const facetCountsToProto = (page: Pick<SearchPage, "facets" | "countsAtLeast">): Record<string, FacetCounts> =>
  Object.fromEntries(
    Object.entries(page.facets).map(([key, values]) => [
      key,
      create(FacetCountsSchema, {
        values: values.map((value) => create(FacetCountSchema, value)),
        atLeast: page.countsAtLeast,
      }),
    ]),
  );

const facetValues = (facets: Record<string, string[]>) =>
  Object.fromEntries(Object.entries(facets).map(([key, values]) => [key, { values }]));

export function heldToProto(row: HeldDocument): OwnedDocument {
  const content = row.content;
  return create(OwnedDocumentSchema, {
    type: row.type,
    id: row.id,
    revision: row.revision,
    deleted: row.deleted,
    indexedAt: timestampFromDate(row.indexedAt),
    document: content
      ? create(IndexDocumentSchema, {
          title: content.title,
          body: content.body,
          url: content.url,
          lang: content.lang,
          access: content.access,
          public: content.public,
          published: content.published,
          facets: facetValues(content.facets),
          publishedAt: timestampFromDate(content.publishedAt),
        })
      : undefined,
  });
}

export function writeResultOf(
  write: { type: string; id: string; revision: bigint },
  answer: WriteAnswer | { outcome: "rejected"; code: string; detail: string; current: bigint },
): WriteResult {
  const outcome = { applied: WriteOutcome.APPLIED, stale: WriteOutcome.STALE, rejected: WriteOutcome.REJECTED };
  return create(WriteResultSchema, {
    type: write.type,
    id: write.id,
    revision: write.revision,
    outcome: outcome[answer.outcome],
    code: "code" in answer ? answer.code : answer.outcome === "stale" ? "search.revision_stale" : "",
    detail:
      "detail" in answer
        ? answer.detail
        : answer.outcome === "stale"
          ? `search holds revision ${answer.current} of this document.`
          : "",
    currentRevision: answer.current,
  });
}

export function rejectionToProto(row: RejectionRow): Rejection {
  return create(RejectionSchema, {
    rejectionId: row.rejectionId,
    type: row.type,
    id: row.id,
    revision: row.revision,
    deletion: row.deletion,
    code: row.code,
    detail: row.detail,
    rejectedAt: timestampFromDate(row.rejectedAt),
  });
}

export function foundToProto(row: FoundDocument): Document {
  return create(DocumentSchema, {
    owner: row.owner,
    type: row.type,
    id: row.id,
    revision: row.revision,
    title: row.title,
    body: row.body,
    url: row.url,
    lang: row.lang,
    public: row.public,
    facets: facetValues(row.facets),
    publishedAt: timestampFromDate(row.publishedAt),
    indexedAt: timestampFromDate(row.indexedAt),
    score: row.score,
  });
}
