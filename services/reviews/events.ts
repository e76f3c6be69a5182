import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  CorrectionSubmittedSchema,
  EntityChangedSchema,
  SummaryChangedSchema,
} from "../../gen/pf/reviews/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes (designed: the spec names no reviews event). */
export const subjects = {
  entity: (action: string) => `reviews.entity.${action}`,
  summary: (state: string) => `reviews.summary.${state}`,
  correctionSubmitted: "reviews.correction.submitted",
} as const;

/** reviews.entity.<action> (created, updated, renamed, deleted, merged, split), in the changing transaction. */
export function entityChanged(
  em: EntityManager,
  change: { entityId: string; action: string; otherEntityId?: string; actor: string; at: Date },
) {
  return recordEvent(em, subjects.entity(change.action), EntityChangedSchema, {
    ...change,
    at: timestampFromDate(change.at),
  });
}

/** reviews.summary.<state> (proposed, approved, rejected, published, unpublished, flagged). */
export function summaryChanged(
  em: EntityManager,
  change: { entityId: string; revision: number; state: string; at: Date },
) {
  return recordEvent(em, subjects.summary(change.state), SummaryChangedSchema, {
    ...change,
    at: timestampFromDate(change.at),
  });
}

/** reviews.correction.submitted: ids only, the text stays in the editors' queue. */
export function correctionSubmitted(em: EntityManager, change: { correctionId: string; entityId: string; at: Date }) {
  return recordEvent(em, subjects.correctionSubmitted, CorrectionSubmittedSchema, {
    ...change,
    at: timestampFromDate(change.at),
  });
}
