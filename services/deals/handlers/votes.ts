import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import { VoteResultSchema, VoteSchema } from "../../../gen/pf/deals/v1/votes_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { rateLimit, type RateRule } from "../../kit/writes/rate-limit.js";
import type { DealsContext } from "../context.js";
import type { OfferRow, VoteRow } from "../db/entities.js";
import { openFlagOf, raiseFlag } from "../db/flags.js";
import { groupOf, offerById, requireActive, tallyOf } from "../db/offers.js";
import { castVote, presentVote, upvotesBetween, withdrawVote } from "../db/votes.js";
import { voteWeight } from "../domain/hotness.js";

type VoteHandlers = Pick<ServiceImpl<typeof DealsService>, "setVote" | "removeVote">;

/** The service's own reporter of vote-ring flags. */
export const DETECTION = "svc:deals";

const voteToProto = (row: VoteRow) =>
  create(VoteSchema, {
    id: row.id,
    offerId: row.offerId,
    voter: row.voter,
    value: Number(row.value),
    weight: Number(row.weight),
    createdAt: timestampFromDate(row.createdAt),
    removedAt: row.removedAt ? timestampFromDate(row.removedAt) : undefined,
  });

/**
 * Votes: +1 or -1 per person and offer, server-authoritative (the request
 * carries the value only: weight and hotness are the service's, and a body
 * naming them is refused as unknown fields). A changed or removed vote stays
 * as a removed row.
 */
export function voteHandlers(ctx: DealsContext): VoteHandlers {
  const { settings, clientKeys } = ctx;

  /** Per person, per IP hash (when the gateway saw one) and per offer. */
  const limits = (call: HandlerContext, person: string, offerId: string): RateRule[] => {
    const client = clientKeys.of(call.requestHeader);
    return [
      { name: "deals.vote.person", key: person, ...settings.votePerPerson },
      ...(client ? [{ name: "deals.vote.ip", key: client, ...settings.votePerIp }] : []),
      { name: "deals.vote.offer", key: offerId, ...settings.votePerOffer },
    ];
  };

  /** The tally a vote result shows: the offer's canonical group's. */
  const tallyAfter = async (em: EntityManager, row: OfferRow) => {
    const canonical = !row.mergedInto ? row : await offerById(em, row.mergedInto);
    return tallyOf(em, canonical, await groupOf(em, canonical));
  };

  return {
    async setVote(request, call) {
      const voter = actingPerson(call);
      // value is 1 or -1: declared (not 0, from -1 to 1).
      const client = clientKeys.of(call.requestHeader);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        // The offer's row lock puts one person's votes on it in order.
        const offer = await offerById(em, request.id, true);
        requireActive(offer, at);
        if (offer.submittedBy === voter) throw problem(403, "vote.own_offer", "No votes on one's own offer.");
        await rateLimit(em, limits(call, voter, offer.id), at);
        const present = await presentVote(em, offer.id, voter);
        let vote = present;
        if (!present || Number(present.value) !== request.value) {
          if (present) await withdrawVote(em, present, at);
          vote = await castVote(em, {
            id: newId("vot"),
            offerId: offer.id,
            voter,
            value: request.value,
            weight: voteWeight(voter),
            ipHash: client,
            createdAt: at,
            removedAt: null,
          });
          if (request.value === 1) await detectRing(em, voter, offer, at);
        }
        return create(VoteResultSchema, { vote: voteToProto(vote!), tally: await tallyAfter(em, offer) });
      });
    },

    async removeVote(request, call) {
      const voter = actingPerson(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const offer = await offerById(em, request.id, true);
        await rateLimit(em, limits(call, voter, offer.id), at);
        const present = await presentVote(em, offer.id, voter);
        if (!present) throw problem(404, "vote.not_found", "You have no vote on this offer.");
        await withdrawVote(em, present, at);
        return create(VoteResultSchema, { vote: voteToProto(present), tally: await tallyAfter(em, offer) });
      });
    },
  };

  /**
   * Vote-ring detection: two people who each up-voted at least the threshold
   * of the other's offers within the window. The offer gets one open
   * vote_ring flag for moderators (and deals.flag.raised); votes stay as cast.
   */
  async function detectRing(em: EntityManager, voter: string, offer: OfferRow, at: Date): Promise<void> {
    const since = new Date(at.getTime() - settings.voteRingWindowMs);
    const given = await upvotesBetween(em, voter, offer.submittedBy, since);
    if (given < settings.voteRingThreshold) return;
    const received = await upvotesBetween(em, offer.submittedBy, voter, since);
    if (received < settings.voteRingThreshold) return;
    if (await openFlagOf(em, offer.id, DETECTION)) return;
    await raiseFlag(em, {
      offerId: offer.id,
      reporter: DETECTION,
      reason: "vote_ring",
      note: `${voter} and ${offer.submittedBy} up-voted each other's offers ${given} and ${received} times in the window.`,
      at,
    });
  }
}
