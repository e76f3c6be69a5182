import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type PasteService, PasteWriteResultSchema } from "../../../gen/pf/community/v1/pastes_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { problem } from "../../kit/handler/problem.js";
import { userText } from "../../kit/handler/text.js";
import type { CommunityContext } from "../context.js";
import type { PasteRow } from "../db/entities.js";
import { pasteBySlug, pasteRef, pasteToProto, react, reloadPaste, unlike } from "../db/pastes.js";
import { commentToProto, resolveThread } from "../db/threads.js";
import { TEXT } from "../domain/text.js";
import { writeComment } from "../comment-writes.js";

type ReactionHandlers = Pick<
  ServiceImpl<typeof PasteService>,
  "likePaste" | "unlikePaste" | "copyPaste" | "commentOnPaste"
>;

const requireActive = (row: PasteRow) => {
  if (row.state !== "active") throw problem(409, "paste.censored", "Staff censored this paste.");
};

/** What anyone does to a paste: like it (once), withdraw the like, copy it (counted once), comment on it. */
export function pasteReactionHandlers(ctx: CommunityContext): ReactionHandlers {
  const reacting = (
    call: HandlerContext,
    slug: string,
    work: (em: EntityManager, row: PasteRow, person: string) => Promise<unknown>,
  ) => {
    const person = actingPerson(call);
    return ctx.transaction(async (em) => {
      const { row } = await pasteBySlug(em, slug, true);
      await work(em, row, person);
      await reloadPaste(em, row);
      return create(PasteWriteResultSchema, { paste: await pasteToProto(em, row, { person }) });
    });
  };

  return {
    likePaste: (request, call) =>
      reacting(call, request.slug, (em, row, person) => {
        requireActive(row);
        return react(em, "likes", row.id, person, ctx.clock.now());
      }),

    unlikePaste: (request, call) => reacting(call, request.slug, (em, row, person) => unlike(em, row.id, person)),

    copyPaste: (request, call) =>
      reacting(call, request.slug, (em, row, person) => {
        requireActive(row);
        return react(em, "copies", row.id, person, ctx.clock.now());
      }),

    async commentOnPaste(request, call) {
      const person = actingPerson(call);
      const body = userText("body", request.body, TEXT.comment);
      const once = idempotencyOf(call, request, { scope: `comment:${person}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const { row } = await pasteBySlug(em, request.slug);
          requireActive(row);
          const thread = await resolveThread(em, pasteRef(row.id), at, true);
          const comment = await writeComment(ctx, em, thread, { kind: "person", person }, body, at);
          return create(PasteWriteResultSchema, {
            paste: await pasteToProto(em, row, { person }),
            comment: commentToProto(comment),
          });
        }),
      );
    },
  };
}
