import type { EntityManager } from "@mikro-orm/postgresql";
import { MembershipCheckedOutSchema, PlanChangedSchema } from "../../gen/pf/vip/v1/events_pb.js";
import type { Membership } from "../../gen/pf/vip/v1/memberships_pb.js";
import type { Plan } from "../../gen/pf/vip/v1/plans_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes. */
export const subjects = {
  planPublished: "vip.plan.published",
  planArchived: "vip.plan.archived",
  membershipCheckedOut: "vip.membership.checked_out",
} as const;

export function planChanged(
  em: EntityManager,
  subject: typeof subjects.planPublished | typeof subjects.planArchived,
  plan: Plan,
  at: Date,
) {
  return recordEvent(em, subject, PlanChangedSchema, { plan }, at);
}

export function membershipCheckedOut(em: EntityManager, membership: Membership, at: Date) {
  return recordEvent(em, subjects.membershipCheckedOut, MembershipCheckedOutSchema, { membership }, at);
}
