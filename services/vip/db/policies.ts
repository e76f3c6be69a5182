import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { PolicyRow } from "./entities.js";

type PolicyText = Omit<PolicyRow, "createdAt" | "updatedAt"> & { createdAt: string; updatedAt: string };

const policyOfResource = new HotRead<PolicyText, [string, string, string]>(
  "policies.by_resource",
  `select id, creator, resource_service as "resourceService", resource_kind as "resourceKind",
     resource_id as "resourceId", rule, plan_id as "planId", perk_id as "perkId",
     always_check_billing as "alwaysCheckBilling", set_by as "setBy", created_at as "createdAt", updated_at as "updatedAt"
   from {policies} where resource_service = $1 and resource_kind = $2 and resource_id = $3`,
);

/** The policy gating a resource, or undefined: a hot read (every gated request of other services evaluates one). */
export async function readPolicyOf(ctx: ReadContext, resource: EntityRef): Promise<PolicyRow | undefined> {
  const [row] = await policyOfResource.run(ctx, resource.service, resource.kind, resource.id);
  return row && { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) };
}
