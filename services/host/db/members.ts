import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { MemberSchema, type Member } from "../../../gen/pf/host/v1/projects_pb.js";
import { MemberRow } from "./entities.js";

/** A project read lists at most this many members. */
export const MEMBERS_SHOWN = 100;

/** A project's members (at most MEMBERS_SHOWN), owners first, then deployers and viewers, each by when added. */
export async function membersOf(em: EntityManager, projectId: string): Promise<MemberRow[]> {
  const rows = await sql<Omit<MemberRow, "addedAt"> & { addedAt: string | Date }>(
    em,
    `select project_id as "projectId", principal, role, added_at as "addedAt" from {members} where project_id = ?
      order by case role when 'owner' then 0 when 'deployer' then 1 else 2 end, added_at, principal limit ?`,
    [projectId, MEMBERS_SHOWN],
  );
  return rows.map((row) => ({ ...row, addedAt: new Date(row.addedAt) }));
}

/** A principal's member row in a project, if any. */
export function memberOf(em: EntityManager, projectId: string, principal: string): Promise<MemberRow | null> {
  return em.findOne(MemberRow, { projectId, principal });
}

/** How many owners a project has. */
export function ownerCount(em: EntityManager, projectId: string): Promise<number> {
  return em.count(MemberRow, { projectId, role: "owner" });
}

/** Adds a member, or changes the role of one (written at once). */
export async function putMember(em: EntityManager, row: MemberRow): Promise<MemberRow> {
  const found = await memberOf(em, row.projectId, row.principal);
  const entity = found ? Object.assign(found, { role: row.role }) : em.create(MemberRow, row);
  await em.flush();
  return entity;
}

/** Takes a member off a project. */
export async function removeMember(em: EntityManager, row: MemberRow): Promise<void> {
  em.remove(row);
  await em.flush();
}

/** A member as answered. */
export function memberToProto(row: MemberRow): Member {
  return create(MemberSchema, { principal: row.principal, role: row.role, addedAt: timestampFromDate(row.addedAt) });
}
