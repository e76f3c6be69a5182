import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { PolicyRow } from "./entities.js";

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

/** The policy of this id, or null. */
export const policyById = (em: EntityManager, id: string) => em.findOne(PolicyRow, { id });

/** The policy gating a resource, read in the caller's transaction (which holds the resource's lock). */
export const policyFor = (em: EntityManager, resource: EntityRef) =>
  em.findOne(PolicyRow, { resourceService: resource.service, resourceKind: resource.kind, resourceId: resource.id });

/** Writes a new policy. */
export async function insertPolicy(em: EntityManager, policy: RequiredEntityData<PolicyRow>): Promise<PolicyRow> {
  const row = em.create(PolicyRow, policy);
  await em.flush();
  return row;
}

/** Writes changes to a policy in the caller's transaction. */
export async function changePolicy(em: EntityManager, row: PolicyRow, changes: Partial<PolicyRow>): Promise<PolicyRow> {
  Object.assign(row, changes);
  await em.flush();
  return row;
}

/** Deletes a policy. */
export async function deletePolicy(em: EntityManager, row: PolicyRow): Promise<void> {
  em.remove(row);
  await em.flush();
}

/** Policies newest first after the cursor's, of one creator and resource service when named (the policy list). */
export function policiesPage(
  em: EntityManager,
  filter: { creator?: string; resourceService?: string; before?: string },
  limit: number,
): Promise<PolicyRow[]> {
  return em.find(
    PolicyRow,
    {
      ...(filter.creator ? { creator: filter.creator } : {}),
      ...(filter.resourceService ? { resourceService: filter.resourceService } : {}),
      ...(filter.before ? { id: { $lt: filter.before } } : {}),
    },
    { orderBy: { id: "desc" }, limit: limit + 1 },
  );
}
