import type { EntityManager } from "@mikro-orm/postgresql";
import { Availability, Condition, type ObservationInput } from "../../../gen/pf/deals/v1/offers_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { observedAt, requirePrice, type Price } from "../domain/observations.js";
import { keywordWords, watchMatches, type WatchKind } from "../domain/watches.js";

type WatchCandidate = {
  id: string;
  owner: string;
  kind: string;
  keyword: string;
  product_id: string | null;
  price_below_minor: string | null;
  price_below_currency: string | null;
};
import { watchesMatched } from "../events.js";
import { AVAILABILITIES, CONDITIONS, offerToProto, observationToProto } from "./offers.js";
import { ObservationRow, type OfferRow } from "./entities.js";

/** The name of an enum value (declared: one the enum defines); null for unspecified, not observed. */
const nameOf = <T extends Record<string, number>>(names: T, value: number): keyof T | null =>
  value === 0 ? null : Object.entries(names).find(([, v]) => v === value)![0];

/** The facts of an observation as sent: each optional, none defaulted. */
export interface ObservedFacts {
  price: Price | null;
  shipping: Price | null;
  condition: string | null;
  availability: string | null;
  observedAt: Date;
}

/** Checks an observation as sent; `statedByService` lets observed_at through (never in the future). */
export function observedFacts(input: ObservationInput | undefined, statedByService: boolean, now: Date): ObservedFacts {
  return {
    price: input?.price ? requirePrice("observation.price", input.price) : null,
    shipping: input?.shipping ? requirePrice("observation.shipping", input.shipping) : null,
    condition: nameOf(CONDITIONS, input?.condition ?? Condition.UNSPECIFIED) as string | null,
    availability: nameOf(AVAILABILITIES, input?.availability ?? Availability.UNSPECIFIED) as string | null,
    observedAt: observedAt(input?.observedAt ? timestampDate(input.observedAt) : undefined, statedByService, now),
  };
}

/** Whether an update carries an observation: any of its fields sent. */
export function hasObservation(input: ObservationInput | undefined): boolean {
  return (
    input !== undefined &&
    (input.price !== undefined ||
      input.shipping !== undefined ||
      input.condition !== 0 ||
      input.availability !== 0 ||
      input.observedAt !== undefined)
  );
}

/**
 * Records a new observation row of an offer (never an edit) and, in the same
 * transaction, notifies each watch it matches: a (watch, observation) row
 * inserted `on conflict do nothing`, and the deals.watch.matched event
 * written to the outbox only when that row is new, so a watch notifies at most
 * once per observation whatever retries or relay restarts happen.
 */
export async function recordObservation(
  em: EntityManager,
  offer: OfferRow,
  facts: ObservedFacts,
  observer: string,
  at: Date,
): Promise<ObservationRow> {
  const row = em.create(ObservationRow, {
    id: newId("obs"),
    offerId: offer.id,
    observedBy: observer,
    priceMinor: facts.price?.minor ?? null,
    priceCurrency: facts.price?.currency ?? null,
    shippingMinor: facts.shipping?.minor ?? null,
    shippingCurrency: facts.shipping?.currency ?? null,
    condition: facts.condition,
    availability: facts.availability,
    observedAt: facts.observedAt,
    recordedAt: at,
  });
  await em.flush();
  await notifyWatches(em, offer, row, facts.price, at);
  return row;
}

/**
 * Notifies each watch an observation matches, at most once per (watch,
 * observation) however often it runs for that observation: the pairs are
 * inserted `on conflict do nothing` and only a new pair writes
 * deals.watch.matched to the outbox. Answers the watches notified now.
 */
export async function notifyWatches(
  em: EntityManager,
  offer: OfferRow,
  row: ObservationRow,
  price: Price | null,
  at: Date,
): Promise<string[]> {
  // Only watches that can match: the offer's product's, or keyword ones whose every word it mentions (a GIN index).
  const offerWords = keywordWords(`${offer.title} ${offer.description}`).join(" ");
  const rows = await sql<WatchCandidate>(
    em,
    `select id, owner, kind, keyword, product_id, price_below_minor, price_below_currency from {watches}
     where kind <> 'saved_search'
       and (${offer.productId ? "product_id = ? or " : ""}(product_id is null and keyword_words <@ string_to_array(?, ' ')))`,
    [...(offer.productId ? [offer.productId] : []), offerWords],
  );
  const candidates = rows.map((row) => ({
    id: row.id,
    owner: row.owner,
    kind: row.kind,
    keyword: row.keyword,
    productId: row.product_id,
    priceBelowMinor: row.price_below_minor,
    priceBelowCurrency: row.price_below_currency,
  }));

  const observed = { title: offer.title, description: offer.description, productId: offer.productId ?? null, price };
  const matched = candidates.filter((watch) =>
    watchMatches(
      {
        kind: watch.kind as WatchKind,
        keyword: watch.keyword,
        productId: watch.productId ?? null,
        priceBelow:
          watch.priceBelowMinor != null && watch.priceBelowCurrency
            ? { minor: BigInt(watch.priceBelowMinor), currency: watch.priceBelowCurrency }
            : null,
      },
      observed,
    ),
  );
  if (matched.length === 0) return [];
  const offerProto = await offerToProto(em, offer, at);
  const observation = observationToProto(row);
  // One statement each, however many watches match: the pairs already notified are skipped.
  const fresh = new Set(
    (
      await sql<{ watch_id: string }>(
        em,
        `insert into {watch_matches} (watch_id, observation_id, offer_id, matched_at)
       values ${matched.map(() => "(?, ?, ?, ?)").join(", ")} on conflict do nothing returning watch_id`,
        matched.flatMap((watch) => [watch.id, row.id, offer.id, at]),
      )
    ).map((inserted) => inserted.watch_id),
  );
  const notified = matched.filter((watch) => fresh.has(watch.id));
  if (notified.length === 0) return [];
  await watchesMatched(
    em,
    notified.map((watch) => ({
      watchId: watch.id,
      owner: watch.owner,
      kind: watch.kind as WatchKind,
      offer: offerProto,
      observation,
      at,
    })),
  );
  return notified.map((watch) => watch.id);
}
