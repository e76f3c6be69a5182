import { EntitlementStatus } from "../../../gen/pf/vip/v1/memberships_pb.js";
import { EvaluateReason } from "../../../gen/pf/vip/v1/policies_pb.js";
import type { Answer } from "./entitlements.js";

export type Rule = "any_member" | "plan_member" | "perk_holder";

/** The plan version a member holds, as the entitlement names it, with the perks of its snapshot. */
export interface Held {
  planId: string;
  perkIds: string[];
}

/**
 * May `subject` see a resource under this rule? The creator always may; an
 * unknown entitlement never authorizes; then the rule: any member, members of
 * its plan, or members whose plan version includes its perk.
 */
export function evaluate(
  policy: { creator: string; rule: Rule; planId: string | null; perkId: string | null },
  subject: string,
  answer: Answer,
  held: Held | undefined,
): { allowed: boolean; reason: EvaluateReason } {
  if (subject === policy.creator) return { allowed: true, reason: EvaluateReason.OWNER };
  if (answer.status === EntitlementStatus.UNKNOWN) return { allowed: false, reason: EvaluateReason.UNKNOWN };
  if (!answer.member) return { allowed: false, reason: EvaluateReason.NOT_MEMBER };
  if (policy.rule === "plan_member" && held?.planId !== policy.planId)
    return { allowed: false, reason: EvaluateReason.PLAN_MISMATCH };
  if (policy.rule === "perk_holder" && !held?.perkIds.includes(policy.perkId ?? ""))
    return { allowed: false, reason: EvaluateReason.PERK_MISSING };
  return { allowed: true, reason: EvaluateReason.MEMBER };
}
