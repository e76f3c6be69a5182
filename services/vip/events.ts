import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { EntitlementChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { MembershipCheckedOutSchema, PlanChangedSchema } from "../../gen/pf/vip/v1/events_pb.js";
import type { Membership } from "../../gen/pf/vip/v1/memberships_pb.js";
import type { Plan } from "../../gen/pf/vip/v1/plans_pb.js";
import { consumer } from "../kit/events/consumer.js";
import { recordEvent } from "../kit/events/outbox.js";
import { factOfSubscription, storeFact } from "./db/projection.js";

/** The subjects this service publishes. */
export const subjects = {
  planPublished: "vip.plan.published",
  planArchived: "vip.plan.archived",
  membershipCheckedOut: "vip.membership.checked_out",
} as const;

export function planChanged(em: EntityManager, subject: typeof subjects.planPublished | typeof subjects.planArchived, plan: Plan, at: Date) {
  return recordEvent(em, subject, PlanChangedSchema, create(PlanChangedSchema, { plan, occurredAt: timestampFromDate(at) }));
}

export function membershipCheckedOut(em: EntityManager, membership: Membership, at: Date) {
  return recordEvent(em, subjects.membershipCheckedOut, MembershipCheckedOutSchema,
    create(MembershipCheckedOutSchema, { membership, occurredAt: timestampFromDate(at) }));
}

/**
 * The projection of billing entitlements: each billing.entitlement.changed
 * (started, renewed, canceled, ended) is applied once (the kit's inbox), and
 * never over a newer fact a direct check brought.
 */
export const entitlementsConsumer = consumer({
  name: "entitlements",
  subject: "billing.entitlement.changed",
  event: EntitlementChangedSchema,
  from: "all",
  async handle(event, em) {
    const subscription = event.subscription;
    if (!subscription || !event.occurredAt) return;
    // Fresh as of billing's change: a delayed event is no fresher than when it happened.
    const at = timestampDate(event.occurredAt);
    await storeFact(em, subscription.subject, subscription.streamer, factOfSubscription(subscription, at, at));
  },
});
