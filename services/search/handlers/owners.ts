import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { OwnerResultSchema } from "../../../gen/pf/search/v1/documents_pb.js";
import type { SearchService } from "../../../gen/pf/search/v1/search_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { decodeTextCursor, encodeCursor, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { SearchContext } from "../context.js";
import { checkWrite, type WriteInput } from "../domain/documents.js";
import { contentOf, heldToProto, rejectionToProto, writeResultOf } from "../domain/convert.js";

type OwnerHandlers = Pick<
  ServiceImpl<typeof SearchService>,
  "putDocument" | "deleteDocument" | "listOwnerDocuments" | "getOwnerDocument" | "listRejections"
>;

/** The owner in the path must be the principal's service slug: writes only by the owning service. */
export function ownerOf(call: HandlerContext, owner: string): string {
  const service = principalOf(call).service;
  if (service === undefined || service !== owner)
    throw problem(403, "search.owner_mismatch", "The owner in the path must be the calling service's own slug.", {
      owner,
    });
  return service;
}

/**
 * Writes one document (PUT) or its tombstone (DELETE): the contract's rules hold id and revision, and type to its
 * shape, before this runs (400); the content must be valid (422).
 */
async function writeOne(ctx: SearchContext, owner: string, input: WriteInput) {
  // The inventory's type filter shares the field, so no rule requires it: a path names one, an RPC call may not.
  if (input.type === "") throw invalid("type", "type is required.");
  const at = ctx.clock.now();
  const checked = checkWrite(input);
  if ("field" in checked) {
    await ctx.engine.reject(
      owner,
      [{ ...input, deletion: input.deleted, code: "search.document_invalid", detail: checked.detail }],
      at,
    );
    throw problem(422, "search.document_invalid", checked.detail, { field: checked.field });
  }
  const [answer] = await ctx.engine.write(owner, [checked], at);
  return create(OwnerResultSchema, { write: writeResultOf(checked, answer) });
}

export function ownerHandlers(ctx: SearchContext): OwnerHandlers {
  return {
    async putDocument(request, call) {
      const owner = ownerOf(call, request.owner);
      const { type, id, revision } = request;
      return writeOne(ctx, owner, { type, id, revision, deleted: false, document: contentOf(request.document) });
    },

    async deleteDocument(request, call) {
      const owner = ownerOf(call, request.owner);
      return writeOne(ctx, owner, { type: request.type, id: request.id, revision: request.revision, deleted: true });
    },

    async listOwnerDocuments(request, call) {
      const owner = ownerOf(call, request.owner);
      const limit = pageLimit(request.limit);
      // type, when sent, is a document type (the contract's rule).
      const after = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      const rows = await ctx.engine.inventory(owner, { type: request.type || undefined, after, limit: limit + 1 });
      const kept = rows.slice(0, limit);
      const last = kept[kept.length - 1];
      return create(OwnerResultSchema, {
        documents: kept.map(heldToProto),
        nextCursor: rows.length > limit ? encodeCursor([last.type, last.id]) : "",
      });
    },

    async getOwnerDocument(request, call) {
      const owner = ownerOf(call, request.owner);
      const found = await ctx.engine.held(owner, request.type, request.id);
      if (!found) throw problem(404, "search.document.not_found", "Search holds no such document of this owner.");
      return create(OwnerResultSchema, { document: heldToProto(found) });
    },

    async listRejections(request, call) {
      const owner = ownerOf(call, request.owner);
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await ctx.engine.rejections(owner, { before, limit: limit + 1 });
      const kept = rows.slice(0, limit);
      return create(OwnerResultSchema, {
        rejections: kept.map(rejectionToProto),
        nextCursor: rows.length > limit ? encodeCursor([kept[kept.length - 1].rejectionId]) : "",
      });
    },
  };
}
