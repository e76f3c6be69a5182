import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Flag } from "../../gen/pf/deals/v1/moderation_pb.js";
import type { Observation, Offer } from "../../gen/pf/deals/v1/offers_pb.js";
import { WatchKind } from "../../gen/pf/deals/v1/watches_pb.js";
import { FlagRaisedSchema, WatchMatchedSchema } from "../../gen/pf/deals/v1/events_pb.js";
import { recordEvent, recordEvents } from "../kit/events/outbox.js";
import type { WatchKind as Kind } from "./domain/watches.js";

/** The subjects this service publishes. */
export const subjects = {
  /** The spec's internal event: a watch matched an observation (at most once per pair). */
  watchMatched: "deals.watch.matched",
  /** A flag was raised (a person's report or a vote-ring flag), for moderators. */
  flagRaised: "deals.flag.raised",
} as const;

export const WATCH_KINDS: Record<Kind, WatchKind> = {
  keyword: WatchKind.KEYWORD,
  product: WatchKind.PRODUCT,
  price_below: WatchKind.PRICE_BELOW,
  saved_search: WatchKind.SAVED_SEARCH,
};

export function watchesMatched(
  em: EntityManager,
  matches: { watchId: string; owner: string; kind: Kind; offer: Offer; observation: Observation; at: Date }[],
) {
  return recordEvents(
    em,
    subjects.watchMatched,
    WatchMatchedSchema,
    matches.map((match) => ({
      watchId: match.watchId,
      owner: match.owner,
      kind: WATCH_KINDS[match.kind],
      offer: match.offer,
      observation: match.observation,
      occurredAt: timestampFromDate(match.at),
    })),
  );
}

export function flagRaised(em: EntityManager, flag: Flag) {
  return recordEvent(em, subjects.flagRaised, FlagRaisedSchema, { flag });
}
