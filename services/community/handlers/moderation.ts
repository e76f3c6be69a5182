import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ModerationResultSchema } from "../../../gen/pf/community/v1/common_pb.js";
import {
  BulkItemSchema,
  type ModerationService,
  PasteModerateResultSchema,
} from "../../../gen/pf/community/v1/moderation_pb.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problemOf } from "../../kit/handler/problem.js";
import type { CommunityContext } from "../context.js";
import type { ModerationRow, PasteRow } from "../db/entities.js";
import { moderationLog, moderationToProto, recordModeration } from "../db/moderation.js";
import { changePaste, pasteBySlug, pasteRef, pasteToProto } from "../db/pastes.js";
import { commentById, commentNotFound, commentToProto, threadOfRef, tombstone } from "../db/threads.js";
import { requireReason } from "../domain/text.js";
import { moderatorOf } from "../moderators.js";

type ModerationHandlers = Pick<
  ServiceImpl<typeof ModerationService>,
  "censorPaste" | "deletePasteComment" | "bulkModeratePastes" | "listModerationLog"
>;

/**
 * Staff moderation of pastes (censor, delete, comment removal, bulk) and the
 * moderation log. Each change writes its audit record in its own transaction;
 * repeating one that changes nothing writes none.
 */
export function moderationHandlers(ctx: CommunityContext): ModerationHandlers {
  type Moderator = ReturnType<typeof moderatorOf>;

  /** Censors (sticky: text withheld, owner cannot edit or undo) or deletes a paste; answers the record when it changed. */
  const act = async (
    em: EntityManager,
    row: PasteRow,
    action: "censor" | "delete",
    moderator: Moderator,
    reason: string,
    at: Date,
  ): Promise<ModerationRow | undefined> => {
    const state = action === "censor" ? "censored" : "deleted";
    if (row.state === state || (action === "censor" && row.state === "deleted")) return undefined;
    await changePaste(em, row, { state, updatedAt: at, ...(action === "censor" ? { censorReason: reason } : {}) });
    return recordModeration(em, {
      action: action === "censor" ? "censor" : "delete_paste",
      target: { service: "community", kind: "paste", id: row.id },
      ...moderator,
      reason,
      status: "applied",
      at,
    });
  };

  return {
    async censorPaste(request, call) {
      const moderator = moderatorOf(call);
      const reason = requireReason(request.reason);
      return ctx.transaction(async (em) => {
        const { row } = await pasteBySlug(em, request.slug, true);
        const record = await act(em, row, "censor", moderator, reason, ctx.clock.now());
        return create(PasteModerateResultSchema, {
          paste: await pasteToProto(em, row, { staff: true }),
          record: record ? moderationToProto(record) : undefined,
        });
      });
    },

    async deletePasteComment(request, call) {
      const moderator = moderatorOf(call);
      const reason = requireReason(request.reason);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const { row } = await pasteBySlug(em, request.slug);
        const comment = await commentById(em, request.id, true);
        // Only a comment of this paste's thread: another paste's comment is not found here.
        const thread = await threadOfRef(em, pasteRef(row.id));
        if (!thread || comment.threadId !== thread.id) throw commentNotFound();
        const changed = await tombstone(em, comment, moderator.actor, at);
        const record = changed
          ? await recordModeration(em, {
              action: "delete_comment",
              target: { service: "community", kind: "comment", id: comment.id },
              ...moderator,
              reason,
              status: "applied",
              at,
            })
          : undefined;
        return create(PasteModerateResultSchema, {
          paste: await pasteToProto(em, row, { staff: true }),
          comment: commentToProto(comment),
          record: record ? moderationToProto(record) : undefined,
        });
      });
    },

    async bulkModeratePastes(request, call) {
      const moderator = moderatorOf(call);
      const reason = requireReason(request.reason);
      // The contract holds action to censor or delete, and slugs to 1 to 500 slugs, none twice.
      const action = request.action as "censor" | "delete";
      const items = [];
      // One transaction per paste: each is done whole or not at all, whatever happens to the others.
      for (const slug of request.slugs) {
        try {
          const record = await ctx.transaction(async (em) => {
            const { row } = await pasteBySlug(em, slug, true);
            return act(em, row, action, moderator, reason, ctx.clock.now());
          });
          items.push(
            create(BulkItemSchema, {
              slug,
              outcome: record ? "applied" : "unchanged",
              record: record ? moderationToProto(record) : undefined,
            }),
          );
        } catch (error) {
          const found = problemOf(error);
          if (found.status >= 500) throw error;
          items.push(create(BulkItemSchema, { slug, outcome: "refused", code: found.code }));
        }
      }
      return create(PasteModerateResultSchema, { items });
    },

    async listModerationLog(request) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      const rows = await ctx.transaction((em) => moderationLog(em, request.status, after, limit + 1));
      const { items, nextCursor } = page(rows, limit, (row) => [row.createdAt.toISOString(), row.id]);
      return create(ModerationResultSchema, { records: items.map(moderationToProto), nextCursor });
    },
  };
}
