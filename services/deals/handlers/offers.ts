import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException, type EntityManager } from "@mikro-orm/postgresql";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import { OfferResultSchema, OfferSchema, type OfferUpdateRequest } from "../../../gen/pf/deals/v1/offers_pb.js";
import { actingPerson, callerOf, principalOf, staffActor } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import type { DealsContext } from "../context.js";
import { audit } from "../db/audit.js";
import { hasObservation, observedFacts, recordObservation } from "../db/observations.js";
import {
  changeOffer,
  insertOffer,
  linkTaken,
  offerById,
  offerByLink,
  offerToProto,
  observationToProto,
  requireActive,
} from "../db/offers.js";
import { productExists } from "../db/products.js";
import { linkKey } from "../domain/links.js";
import { EXPIRY, offerStatus, requireCategory, requireStatedExpiry, requireTitle } from "../domain/offers.js";
import { offerDocuments } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";

type OfferHandlers = Pick<
  ServiceImpl<typeof DealsService>,
  "submitOffer" | "updateOffer" | "recordObservation" | "expireOffer"
>;

/** 400 unless the product exists. */
async function requireProduct(em: EntityManager, field: string, id: string): Promise<string> {
  if (!(await productExists(em, id))) throw invalid(field, `${field} names no product (resolve it first)`);
  return id;
}

/** 409 offer.duplicate carrying the existing offer. */
async function duplicate(em: EntityManager, key: string, now: Date) {
  const existing = await offerByLink(em, key);
  const offer = toJson(OfferSchema, await offerToProto(em, existing, now), {
    useProtoFieldName: true,
    alwaysEmitImplicit: true,
  }) as JsonObject;
  return problem(409, "offer.duplicate", "This link was already posted.", { offer });
}

const EDITS = ["title", "description", "category", "expires_at", "product_id"] as const;

/** The offer fields an update edits (the submitter's own), by their names in the request. */
function editsOf(request: OfferUpdateRequest): (typeof EDITS)[number][] {
  return EDITS.filter(
    (field) =>
      ({
        title: request.title !== undefined,
        description: request.description !== undefined,
        category: request.category !== undefined,
        expires_at: request.expiresAt !== undefined,
        product_id: request.productId !== undefined,
      })[field],
  );
}

/** Offers: submit (with the first observation), edits by the submitter, new observations, expiry. */
export function offerHandlers(ctx: DealsContext): OfferHandlers {
  /** An edit and/or an observation of one offer, in one transaction, idempotent by key when one is sent. */
  async function update(request: OfferUpdateRequest, call: HandlerContext, allowEdits: boolean) {
    const principal = principalOf(call);
    const person = actingPerson(call);
    const edits = editsOf(request);
    const observing = !allowEdits || hasObservation(request.observation);
    if (edits.length === 0 && !observing)
      throw invalid("observation", "Nothing to update: send offer fields or an observation.");
    const now = ctx.clock.now();
    const facts = observing ? observedFacts(request.observation, principal.kind === "service", now) : undefined;
    const title = request.title !== undefined ? requireTitle("title", request.title) : undefined;
    const description = request.description; // at most 5000 characters: declared
    const category = request.category !== undefined ? requireCategory("category", request.category) : undefined;
    const expiresAt = request.expiresAt
      ? requireStatedExpiry("expires_at", timestampDate(request.expiresAt), now)
      : undefined;
    const scope = `offer.${allowEdits ? "update" : "observe"}:${principal.sub}:${person}`;
    const idempotency = idempotencyOf(call, request, { scope });
    return ctx.transaction((em) =>
      idempotency.run(em, async () => {
        const at = ctx.clock.now();
        const row = await offerById(em, request.id, true);
        if (edits.length > 0) {
          if (row.submittedBy !== person)
            throw problem(403, "offer.not_submitter", "Only the person who submitted the offer edits it.");
          // Past its stated end the offer has expired, worker or not: an edit of expires_at never revives it.
          if (!row.expiredAt && row.expiresAt && row.expiresAt <= at)
            Object.assign(row, { expiredAt: row.expiresAt, expiredBy: EXPIRY });
          const status = offerStatus(row, at);
          if (status === "merged" || status === "disabled")
            throw problem(409, "offer.not_active", `The offer is ${status}.`, { offer_status: status });
          const productId =
            request.productId === undefined
              ? undefined
              : request.productId === ""
                ? null
                : await requireProduct(em, "product_id", request.productId);
          await changeOffer(em, row, {
            ...(title !== undefined ? { title } : {}),
            ...(description !== undefined ? { description } : {}),
            ...(category !== undefined ? { category } : {}),
            ...(expiresAt !== undefined ? { expiresAt } : {}),
            ...(productId !== undefined ? { productId } : {}),
            // Text an AI assisted with stays disclosed, and unindexed until a person reviews it again.
            ...(principal.origin === "ai" ? { aiAssisted: true, noindex: true } : {}),
            updatedAt: at,
          });
          await refreshSearchDocuments(em, offerDocuments, [row.id], at);
        }
        let observation;
        if (facts) {
          requireActive(row, at);
          // Insert-only history on anyone's offer, each matched against every watch: bounded by a rate, as submits are.
          await rateLimit(
            em,
            [{ name: "deals.observation.person", key: person, ...ctx.settings.observePerPerson }],
            at,
          );
          observation = observationToProto(await recordObservation(em, row, facts, person, at));
        }
        return create(OfferResultSchema, { offer: await offerToProto(em, row, at), observation });
      }),
    );
  }

  return {
    async submitOffer(request, call) {
      const principal = principalOf(call);
      const person = actingPerson(call);
      const key = linkKey("link", request.link);
      const title = requireTitle("title", request.title);
      const { description } = request; // at most 5000 characters: declared
      const category = requireCategory("category", request.category);
      const now = ctx.clock.now();
      const expiresAt = request.expiresAt
        ? requireStatedExpiry("expires_at", timestampDate(request.expiresAt), now)
        : null;
      const facts = observedFacts(request.observation, principal.kind === "service", now);
      const idempotency = idempotencyOf(call, request, { scope: `offer.submit:${principal.sub}:${person}` });
      try {
        return await ctx.transaction((em) =>
          idempotency.run(em, async () => {
            const at = ctx.clock.now();
            await rateLimit(em, [{ name: "deals.submit.person", key: person, ...ctx.settings.submitPerPerson }], at);
            if (await linkTaken(em, key)) throw await duplicate(em, key, at);
            const productId =
              request.productId === "" ? null : await requireProduct(em, "product_id", request.productId);
            const ai = principal.origin === "ai";
            const row = await insertOffer(em, {
              id: newId("off"),
              link: request.link,
              linkKey: key,
              title,
              description,
              category,
              productId,
              expiresAt,
              submittedBy: person,
              aiAssisted: ai,
              noindex: ai,
              reviewedBy: null,
              reviewedAt: null,
              expiredAt: null,
              expiredBy: null,
              disabledAt: null,
              mergedInto: null,
              createdAt: at,
              updatedAt: at,
            });
            const observation = await recordObservation(em, row, facts, person, at);
            await refreshSearchDocuments(em, offerDocuments, [row.id], at);
            return create(OfferResultSchema, {
              offer: await offerToProto(em, row, at),
              observation: observationToProto(observation),
            });
          }),
        );
      } catch (error) {
        // Two submits of one link at once: the loser answers as any later duplicate does.
        if (error instanceof UniqueConstraintViolationException)
          throw await duplicate(ctx.orm.em.fork(), key, ctx.clock.now());
        throw error;
      }
    },

    updateOffer: (request, call) => update(request, call, true),
    recordObservation: (request, call) => update(request, call, false),

    async expireOffer(request, call) {
      // Admitted as a moderator ("moderate"), or as a person expiring their own offer ("own").
      const moderator = callerOf(call).admittedBy === "moderate" ? staffActor(call) : undefined;
      const person = moderator ?? actingPerson(call);
      const { reason } = request; // at most 500 characters: declared
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = await offerById(em, request.id, true);
        if (!moderator && row.submittedBy !== person)
          throw problem(403, "offer.not_submitter", "Only the submitter or a moderator expires an offer.");
        const status = offerStatus(row, at);
        if (status === "expired") return create(OfferResultSchema, { offer: await offerToProto(em, row, at) });
        if (status !== "active")
          throw problem(409, "offer.not_active", `The offer is ${status}.`, { offer_status: status });
        await changeOffer(em, row, { expiredAt: at, expiredBy: person, updatedAt: at });
        await refreshSearchDocuments(em, offerDocuments, [row.id], at);
        if (moderator && row.submittedBy !== moderator)
          await audit(em, { action: "expire", offerId: row.id, actor: moderator, reason, at });
        return create(OfferResultSchema, { offer: await offerToProto(em, row, at) });
      });
    },
  };
}
