import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { DocumentWriteSchema, WriteOutcome as Outcome } from "../../../gen/pf/search/v1/documents_pb.js";
import { SearchIndexService, SearchService } from "../../../gen/pf/search/v1/search_pb.js";
import { MAX_LIMIT } from "../handler/paging.js";
import type { SearchIndex, WriteOutcome } from "./document.js";

/**
 * The search service as an owner's `SearchIndex`: its typed clients, carrying the owner's own token (which must hold
 * `search.document.write`): the batch write (`SearchIndexService.WriteDocuments`) and the owner's inventory
 * (`SearchService.ListOwnerDocuments`, the owner being the caller's service key).
 */
export function connectSearchIndex(
  owner: string,
  client: <S extends typeof SearchService | typeof SearchIndexService>(service: S) => Client<S>,
): SearchIndex {
  const writer = client(SearchIndexService);
  const reader = client(SearchService);
  return {
    async write(writes) {
      const { results } = await writer.writeDocuments({
        writes: writes.map((write) =>
          create(DocumentWriteSchema, {
            type: write.type,
            id: write.id,
            revision: BigInt(write.revision),
            deleted: write.deleted,
            ...(write.document && { document: write.document }),
          }),
        ),
      });
      return results.map((result): WriteOutcome => {
        if (result.outcome === Outcome.APPLIED) return { outcome: "applied" };
        if (result.outcome === Outcome.STALE)
          return { outcome: "stale", currentRevision: Number(result.currentRevision) };
        return { outcome: "rejected", reason: `${result.code}: ${result.detail}` };
      });
    },
    async inventory(cursor) {
      // The platform's largest page.
      const page = await reader.listOwnerDocuments({ owner, limit: MAX_LIMIT, cursor });
      return {
        documents: page.documents.map((held) => ({
          type: held.type,
          id: held.id,
          revision: Number(held.revision),
          deleted: held.deleted,
        })),
        nextCursor: page.nextCursor,
      };
    },
  };
}
