import type { EntityManager } from "@mikro-orm/postgresql";
import type { AlertDelivery } from "../../gen/pf/trade/v1/alerts_pb.js";
import {
  type ContextRevision,
  ContextProposedSchema,
  ContextPublishedSchema,
} from "../../gen/pf/trade/v1/context_pb.js";
import { AlertTriggeredSchema } from "../../gen/pf/trade/v1/events_pb.js";
import { recordEvent, recordEvents } from "../kit/events/outbox.js";

/** The subjects this service publishes. */
export const subjects = {
  /** The spec's event: an alert rule delivered (visibility subject: its person only). */
  alertTriggered: "trade.alert.triggered",
  /** Designed (the spec names no context event): a revision awaits review. */
  contextProposed: "trade.context.proposed",
  /** Designed: an instrument's published context changed. */
  contextPublished: "trade.context.published",
} as const;

/** One trade.alert.triggered per delivery, addressed to the rule's person only; in the delivering transaction. */
export function alertsTriggered(em: EntityManager, deliveries: AlertDelivery[]) {
  return recordEvents(
    em,
    subjects.alertTriggered,
    AlertTriggeredSchema,
    deliveries.map((delivery) => ({ delivery, subject: delivery.subject, visibility: "subject" })),
  );
}

/** trade.context.proposed, in the proposing transaction. */
export function contextProposed(em: EntityManager, symbol: string, revision: ContextRevision) {
  return recordEvent(em, subjects.contextProposed, ContextProposedSchema, { symbol, revision });
}

/** trade.context.published, in the publishing transaction. */
export function contextPublished(em: EntityManager, symbol: string, revision: ContextRevision, superseded: number) {
  return recordEvent(em, subjects.contextPublished, ContextPublishedSchema, { symbol, revision, superseded });
}
