import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  Environment,
  ProjectSchema,
  QuotaSchema,
  TakedownSchema,
  UsageSchema,
  type Member,
  type Project,
  type Quota,
  type Takedown,
  type Usage,
} from "../../../gen/pf/host/v1/projects_pb.js";
import { sql } from "../../kit/db/sql.js";
import { projectNotFound } from "./access.js";
import { MemberRow, ProjectRow } from "./entities.js";

/** The environments as stored and as answered. */
export const ENVIRONMENTS = { production: Environment.PRODUCTION, sandbox: Environment.SANDBOX } as const;
export type EnvironmentName = keyof typeof ENVIRONMENTS;

/** A project, locked for the rest of the transaction (its members, quota, sites and takedown change one at a time). */
export async function lockedProject(em: EntityManager, id: string): Promise<ProjectRow> {
  const row = await em.findOne(ProjectRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!row) throw projectNotFound();
  return row;
}

/** A project as it stands; 404 when there is none. */
export async function projectById(em: EntityManager, id: string): Promise<ProjectRow> {
  const row = await em.findOne(ProjectRow, { id });
  if (!row) throw projectNotFound();
  return row;
}

/** Stores a new project with its creator as its first owner. */
export async function insertProject(
  em: EntityManager,
  row: RequiredEntityData<ProjectRow>,
): Promise<{ project: ProjectRow; owner: MemberRow }> {
  const project = em.create(ProjectRow, row);
  const owner = em.create(MemberRow, {
    projectId: row.id,
    principal: row.createdBy,
    role: "owner",
    addedAt: row.createdAt,
  });
  await em.flush();
  return { project, owner };
}

/** Writes the changes made to a locked project row. */
export async function saveProject(em: EntityManager): Promise<void> {
  await em.flush();
}

/**
 * Up to `rows` projects `principal` is a member of, newest first, before the `before` id ("" from the newest); only
 * sandbox ones for a sandbox token.
 */
export async function projectsPage(
  em: EntityManager,
  filter: { principal: string; sandboxOnly: boolean; before: string },
  rows: number,
): Promise<{ id: string; project: ProjectRow; role: string }[]> {
  const found = await sql<{ id: string; role: string }>(
    em,
    `select p.id, m.role from {members} m join {projects} p on p.id = m.project_id
      where m.principal = ? and (not ? or p.environment = 'sandbox') and (? = '' or p.id < ?)
      order by p.id desc limit ?`,
    [filter.principal, filter.sandboxOnly, filter.before, filter.before, rows],
  );
  if (found.length === 0) return [];
  const projects = await em.find(ProjectRow, { id: { $in: found.map((row) => row.id) } });
  const byId = new Map(projects.map((row) => [row.id, row]));
  return found.flatMap(({ id, role }) => {
    const project = byId.get(id);
    return project ? [{ id, project, role }] : [];
  });
}

/** How many sites a project has. */
export async function siteCount(em: EntityManager, projectId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(em, `select count(*)::int as n from {sites} where project_id = ?`, [
    projectId,
  ]);
  return row.n;
}

/**
 * What a project uses, as its quota counts: the bytes of the deploys it keeps (ready, or validating while an upload
 * streams in; failed and deleted ones keep nothing), those deploys, and its sites.
 */
export async function usageOf(em: EntityManager, projectId: string): Promise<Usage> {
  const [row] = await sql<{ bytes: string; deploys: number; sites: number }>(
    em,
    `select coalesce(sum(d.bytes), 0)::text as bytes, count(d.id)::int as deploys,
        (select count(*)::int from {sites} s where s.project_id = ?) as sites
      from {deploys} d where d.project_id = ? and d.state in ('ready', 'validating')`,
    [projectId, projectId],
  );
  return create(UsageSchema, { storageBytes: BigInt(row.bytes), deploys: row.deploys, sites: row.sites });
}

/** Deletes an empty project (no sites left): its members, and the rows its deleted deploys left. */
export async function deleteProject(em: EntityManager, id: string): Promise<void> {
  await sql(em, `delete from {deploy_log} where deploy_id in (select id from {deploys} where project_id = ?)`, [id]);
  await sql(em, `delete from {deploys} where project_id = ?`, [id]);
  await sql(em, `delete from {members} where project_id = ?`, [id]);
  await sql(em, `delete from {projects} where id = ?`, [id]);
}

/** A takedown as answered, undefined when there is none. */
export function takedownToProto(row: {
  takenDownAt?: Date | null;
  takenDownBy: string;
  takenDownReason: string;
}): Takedown | undefined {
  if (!row.takenDownAt) return undefined;
  return create(TakedownSchema, {
    by: row.takenDownBy,
    reason: row.takenDownReason,
    at: timestampFromDate(row.takenDownAt),
  });
}

/** A project's caps as answered. */
export function quotaToProto(row: ProjectRow): Quota {
  return create(QuotaSchema, {
    storageBytes: BigInt(row.quotaStorageBytes),
    deployFiles: row.quotaDeployFiles,
    deployBytes: BigInt(row.quotaDeployBytes),
    fileBytes: BigInt(row.quotaFileBytes),
    sites: row.quotaSites,
  });
}

/** A project as answered: its members on a read, the caller's own role where known. */
export function projectToProto(row: ProjectRow, extra: { members?: Member[]; role?: string } = {}): Project {
  return create(ProjectSchema, {
    id: row.id,
    name: row.name,
    createdBy: row.createdBy,
    environment: ENVIRONMENTS[row.environment as EnvironmentName],
    members: extra.members ?? [],
    takedown: takedownToProto(row),
    createdAt: timestampFromDate(row.createdAt),
    role: extra.role ?? "",
  });
}
