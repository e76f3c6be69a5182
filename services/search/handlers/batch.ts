import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { DocumentBatchResultSchema, type WriteResult } from "../../../gen/pf/search/v1/documents_pb.js";
import type { SearchIndexService } from "../../../gen/pf/search/v1/search_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { invalid } from "../../kit/handler/problem.js";
import type { SearchContext } from "../context.js";
import { checkWrite, type ValidWrite } from "../domain/documents.js";
import type { RefusedWrite } from "../engine/engine.js";
import { contentOf, writeResultOf } from "../domain/convert.js";

type BatchHandlers = Pick<ServiceImpl<typeof SearchIndexService>, "writeDocuments">;

/** The owner relay's batch: each write checked alone, the valid ones applied in one statement. */
export function batchHandlers(ctx: SearchContext): BatchHandlers {
  return {
    async writeDocuments(request, call) {
      // Internal: enforcement admitted only service tokens, so the owner is the caller's service. The contract holds
      // a batch to 500 writes; each write's faults reject that write alone.
      const owner = principalOf(call).service!;
      const seen = new Set(request.writes.map((write) => `${write.type}\u0000${write.id}`));
      if (seen.size !== request.writes.length) throw invalid("writes", "a batch names each document at most once.");
      const at = ctx.clock.now();
      const results: (WriteResult | undefined)[] = [];
      const valid: { at: number; write: ValidWrite }[] = [];
      const refused: RefusedWrite[] = [];
      request.writes.forEach((write, index) => {
        const input = { ...write, document: write.deleted ? undefined : contentOf(write.document) };
        const checked = checkWrite(input);
        if ("field" in checked) {
          const detail = `${checked.field}: ${checked.detail}`;
          refused.push({ ...write, deletion: write.deleted, code: "search.document_invalid", detail });
          results[index] = writeResultOf(write, {
            outcome: "rejected",
            code: "search.document_invalid",
            detail,
            current: 0n,
          });
        } else valid.push({ at: index, write: checked });
      });
      await ctx.engine.reject(owner, refused, at);
      const answers = await ctx.engine.write(
        owner,
        valid.map(({ write }) => write),
        at,
      );
      valid.forEach(({ at: index, write }, i) => (results[index] = writeResultOf(write, answers[i])));
      return create(DocumentBatchResultSchema, { results: results as WriteResult[] });
    },
  };
}
