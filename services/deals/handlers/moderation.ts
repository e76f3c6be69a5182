import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import {
  type AuditEntry,
  ModeratedOfferSchema,
  type ModerationRequest,
  ModerationResultSchema,
} from "../../../gen/pf/deals/v1/moderation_pb.js";
import { staffActor } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { DealsContext } from "../context.js";
import { audit } from "../db/audit.js";
import type { OfferRow } from "../db/entities.js";
import { changeOffer, offerById, offerToProto, recordReview } from "../db/offers.js";
import { offerDocuments } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";

type ModerationHandlers = Pick<ServiceImpl<typeof DealsService>, "disableOffer" | "enableOffer" | "reviewOffer">;

/**
 * Offer moderation, each change audited: disable, enable (the offer shows
 * the state beneath again), and a person's review of AI-assisted text.
 * Repeating a disable or an enable changes nothing and writes no audit.
 */
export function moderationHandlers(ctx: DealsContext): ModerationHandlers {
  const moderate = (
    request: ModerationRequest,
    call: HandlerContext,
    act: (em: EntityManager, row: OfferRow, actor: string, reason: string, at: Date) => Promise<AuditEntry | undefined>,
  ) => {
    const actor = staffActor(call);
    const { reason } = request; // at most 500 characters: declared
    return ctx.transaction(async (em) => {
      const at = ctx.clock.now();
      const row = await offerById(em, request.id, true);
      const entry = await act(em, row, actor, reason, at);
      await refreshSearchDocuments(em, offerDocuments, [row.id], at);
      const value = create(ModeratedOfferSchema, { offer: await offerToProto(em, row, at), audit: entry });
      return create(ModerationResultSchema, { result: { case: "offer", value } });
    });
  };

  return {
    disableOffer: (request, call) =>
      moderate(request, call, async (em, row, actor, reason, at) => {
        if (row.disabledAt !== null) return undefined;
        await changeOffer(em, row, { disabledAt: at, updatedAt: at });
        return audit(em, { action: "disable", offerId: row.id, actor, reason, at });
      }),

    enableOffer: (request, call) =>
      moderate(request, call, async (em, row, actor, reason, at) => {
        if (row.disabledAt === null) return undefined;
        await changeOffer(em, row, { disabledAt: null, updatedAt: at });
        return audit(em, { action: "enable", offerId: row.id, actor, reason, at });
      }),

    reviewOffer: (request, call) =>
      moderate(request, call, async (em, row, actor, reason, at) => {
        // A review is a person's: recorded for usr_ subjects only, never for a service or a guest.
        if (!actor.startsWith("usr_")) {
          throw problem(
            403,
            "deals.review_person_required",
            "A review is recorded for a person (a usr_ subject in X-PF-Subject, stated staff) only.",
          );
        }
        await recordReview(em, row, actor, reason, at);
        return audit(em, { action: "review", offerId: row.id, actor, reason, at });
      }),
  };
}
