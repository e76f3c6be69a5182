import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { StaffMember } from "./entities.js";

/** The network's owner (one at most, an index holds it), or null. */
export const networkOwner = (em: EntityManager) => em.findOne(StaffMember, { role: "owner" });

/** Whether the person is the network's owner. */
export async function isNetworkOwner(em: EntityManager, subject: string): Promise<boolean> {
  return (await em.findOne(StaffMember, { subject, role: "owner" })) !== null;
}

/** Writes a staff member's role and capabilities (a second owner fails on the one-owner index). */
export const saveStaffMember = (em: EntityManager, member: RequiredEntityData<StaffMember>) =>
  em.upsert(StaffMember, member);

/** Removes a person from the staff; true when they were on it. */
export async function deleteStaffMember(em: EntityManager, subject: string): Promise<boolean> {
  return (await em.nativeDelete(StaffMember, { subject })) > 0;
}
