import { create, toJson } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import { MergeSchema, OfferResultSchema, type Tally, TallySchema } from "../../../gen/pf/deals/v1/offers_pb.js";
import { staffActor } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { DealsContext } from "../context.js";
import { audit } from "../db/audit.js";
import type { OfferRow } from "../db/entities.js";
import { changeOffer, groupOf, lockOfferPair, offerById, offerToProto, tallyOf } from "../db/offers.js";
import { offerDocuments } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";

type MergeHandlers = Pick<ServiceImpl<typeof DealsService>, "mergeOffer" | "unmergeOffer">;

const tallies = async (em: EntityManager, offer: OfferRow, canonical: OfferRow) => ({
  offer: await tallyOf(em, offer, await groupOf(em, offer)),
  canonical: await tallyOf(em, canonical, await groupOf(em, canonical)),
});

const json = (tally: Tally) => toJson(TallySchema, tally, { useProtoFieldName: true, alwaysEmitImplicit: true });

/**
 * Merge and unmerge: setting or clearing one column (merged_into) of the
 * merged offer. Nothing is copied or deleted: votes, observations, sources
 * and comments stay where written, and the canonical offer reads across its
 * group (a voter counted once), so an unmerge restores every tally exactly.
 * Each is audited with both offers' tallies before and after.
 */
export function mergeHandlers(ctx: DealsContext): MergeHandlers {
  const change = (
    id: string,
    actor: string,
    reason: string,
    action: "merge" | "unmerge",
    intoOf: (row: OfferRow) => string,
  ) =>
    ctx.transaction(async (em) => {
      const at = ctx.clock.now();
      const into = intoOf(await offerById(em, id));
      const [offer, canonical] = await lockOfferPair(em, id, into);
      if (action === "merge") {
        if (offer.mergedInto)
          throw problem(409, "offer.merged", "The offer is already merged.", { merged_into: offer.mergedInto });
        if (canonical.mergedInto) {
          throw problem(409, "offer.merge_target_merged", "Merge into the canonical offer of that group.", {
            merged_into: canonical.mergedInto,
          });
        }
        if ((await groupOf(em, offer)).length > 1) {
          throw problem(
            409,
            "offer.has_merged",
            "Offers are merged into this one: unmerge them first (nothing is ever re-pointed).",
          );
        }
      } else if (offer.mergedInto !== into) {
        throw problem(409, "offer.not_merged", "The offer is not merged.");
      }
      const before = await tallies(em, offer, canonical);
      await changeOffer(em, offer, { mergedInto: action === "merge" ? canonical.id : null, updatedAt: at });
      // A merged offer leaves search (its canonical stays); an unmerged one comes back if still listed.
      await refreshSearchDocuments(em, offerDocuments, [offer.id], at);
      const after = await tallies(em, offer, canonical);
      const entry = await audit(em, {
        action,
        offerId: offer.id,
        actor,
        reason,
        details: {
          canonical_id: canonical.id,
          offer_before: json(before.offer),
          canonical_before: json(before.canonical),
          offer_after: json(after.offer),
          canonical_after: json(after.canonical),
        },
        at,
      });
      const merge = create(MergeSchema, {
        id: entry.id,
        action,
        offerId: offer.id,
        canonicalId: canonical.id,
        offerBefore: before.offer,
        canonicalBefore: before.canonical,
        offerAfter: after.offer,
        canonicalAfter: after.canonical,
        actor,
      });
      return create(OfferResultSchema, {
        offer: await offerToProto(em, action === "merge" ? canonical : offer, at),
        merge,
      });
    });

  return {
    async mergeOffer(request, call) {
      const actor = staffActor(call);
      // Declared: into given, a reason of at most 500 characters.
      if (request.into === request.id) throw invalid("into", "An offer is not merged into itself");
      return change(request.id, actor, request.reason, "merge", () => request.into);
    },

    async unmergeOffer(request, call) {
      const actor = staffActor(call);
      return change(request.id, actor, request.reason, "unmerge", (row) => {
        if (!row.mergedInto) throw problem(409, "offer.not_merged", "The offer is not merged.");
        return row.mergedInto;
      });
    },
  };
}
