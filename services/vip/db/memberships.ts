import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { MembershipRow } from "./entities.js";

type MembershipText = Omit<MembershipRow, "createdAt"> & { createdAt: string };

const membershipsOfMember = new HotRead<MembershipText, [string]>(
  "memberships.by_member",
  `select id, member, creator, plan_id as "planId", plan_version as "planVersion", preferences, paid_via as "paidVia",
     intent_id as "intentId", subscription_id as "subscriptionId", created_at as "createdAt"
   from {memberships} where member = $1 order by id desc`,
);

/** A member's checkouts made here, newest first, read outside any transaction (a hot read). */
export async function readMemberships(ctx: ReadContext, member: string): Promise<MembershipRow[]> {
  return (await membershipsOfMember.run(ctx, member)).map((row) => ({ ...row, createdAt: new Date(row.createdAt) }));
}

/** Writes a checkout's membership. */
export async function insertMembership(
  em: EntityManager,
  membership: RequiredEntityData<MembershipRow>,
): Promise<MembershipRow> {
  const row = em.create(MembershipRow, membership);
  await em.flush();
  return row;
}
