import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  PasteRawResultSchema,
  PasteReadResultSchema,
  type PasteService,
} from "../../../gen/pf/community/v1/pastes_pb.js";
import { personOf, principalOf } from "../../kit/auth/principal.js";
import { answerDocument } from "../../kit/feeds/answer.js";
import { answerRedirect } from "../../kit/handler/status.js";
import { decodeTextCursor, decodeTimeCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid } from "../../kit/handler/problem.js";
import { isSubjectId } from "../../kit/handler/subjects.js";
import type { CommunityContext } from "../context.js";
import { listedPasteToProto, pasteBySlug, pasteNotFound, pasteRef, pasteToProto, readPastesOf } from "../db/pastes.js";
import { commentsOf, commentToProto, threadOfRef, votesOf } from "../db/threads.js";
import { requireReadable } from "../domain/threads.js";
import { readsAsModerator } from "../moderators.js";

type PasteReadHandlers = Pick<
  ServiceImpl<typeof PasteService>,
  "getPaste" | "getRawPaste" | "listPastes" | "listPasteComments"
>;

/** Paste reads (designed): a paste without comments and its raw text to anyone, a person's pastes, a paste's comments. */
export function pasteReadHandlers(ctx: CommunityContext): PasteReadHandlers {
  return {
    async getPaste(request, call) {
      const person = personOf(principalOf(call));
      return ctx.transaction(async (em) => {
        const { row, moved } = await pasteBySlug(em, request.slug);
        if (moved) {
          // Relative to the path asked (…/pastes/<old>), so it holds behind any base path.
          answerRedirect(call, encodeURIComponent(row.slug));
          return create(PasteReadResultSchema, { movedTo: row.slug });
        }
        return create(PasteReadResultSchema, { paste: await pasteToProto(em, row, { person }) });
      });
    },

    async *getRawPaste(request, call) {
      const row = await ctx.transaction(async (em) => (await pasteBySlug(em, request.slug)).row);
      if (row.state !== "active" || row.kind !== "text") throw pasteNotFound();
      const body = answerDocument(call, {
        contentType: "text/plain; charset=utf-8",
        body: row.body,
        maxAgeSeconds: 60,
      });
      yield create(PasteRawResultSchema, { body });
    },

    async listPastes(request, call) {
      if (!isSubjectId(request.owner))
        throw invalid("owner", "owner is the person (usr_ or gst_) whose pastes to list");
      const limit = pageLimit(request.limit);
      const after = decodeTimeCursor(request.cursor);
      const person = personOf(principalOf(call));
      // One statement per page, outside any transaction: a page of 200 costs what a page of 5 does.
      const rows = await readPastesOf(ctx, request.owner, person, after, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [new Date(row.createdAt).toISOString(), row.id]);
      return create(PasteReadResultSchema, { pastes: items.map(listedPasteToProto), nextCursor });
    },

    async listPasteComments(request, call) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      const person = personOf(principalOf(call));
      const moderator = readsAsModerator(call);
      return ctx.transaction(async (em) => {
        const { row } = await pasteBySlug(em, request.slug);
        const thread = await threadOfRef(em, pasteRef(row.id));
        if (thread) requireReadable(thread.visibility, moderator);
        const rows = thread ? await commentsOf(em, thread.id, after, limit + 1) : [];
        const { items, nextCursor } = page(rows, limit, (each) => [each.createdAt.toISOString(), each.id]);
        const votes = await votesOf(
          em,
          items.map((each) => each.id),
          person,
        );
        return create(PasteReadResultSchema, {
          paste: await pasteToProto(em, row, { person, staff: moderator }),
          comments: items.map((each) => commentToProto(each, votes.get(each.id) ?? 0)),
          nextCursor,
        });
      });
    },
  };
}
