import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  DeploySchema,
  DeployState,
  LogEntrySchema,
  type Deploy,
  type LogEntry,
} from "../../../gen/pf/host/v1/deploys_pb.js";
import { sql } from "../../kit/db/sql.js";
import { DeployFileRow, DeployLogRow, DeployRow, type ProjectRow } from "./entities.js";
import type { LogLine, UploadLimits } from "../domain/archive/index.js";
import { lockedProject, usageOf } from "./projects.js";

/** A deploy as routes answer it, with its site's pointer (null once the site is gone). */
export type DeployView = DeployRow & { activeDeployId: string | null };

/** One file of a deploy's manifest, as the upload stored it. */
export interface ManifestFile {
  path: string;
  digest: string;
  size: number;
  contentType: string;
  encodings: Record<string, { digest: string; size: number }>;
}

export function deployToProto(row: DeployView): Deploy {
  return create(DeploySchema, {
    id: row.id,
    siteId: row.siteId,
    projectId: row.projectId,
    state: STATES[row.state] ?? DeployState.UNSPECIFIED,
    active: row.activeDeployId === row.id,
    files: row.files,
    bytes: BigInt(row.bytes),
    digest: row.digest,
    createdBy: row.createdBy,
    createdAt: timestampFromDate(new Date(row.createdAt)),
    validatedAt: row.validatedAt ? timestampFromDate(new Date(row.validatedAt)) : undefined,
    error: row.error,
  });
}

const STATES: Record<string, DeployState> = {
  validating: DeployState.VALIDATING,
  ready: DeployState.READY,
  failed: DeployState.FAILED,
  deleted: DeployState.DELETED,
};

const VIEW = `d.id, d.site_id as "siteId", d.project_id as "projectId", d.state, d.files, d.bytes::float8 as bytes,
  d.digest, d.created_by as "createdBy", d.created_at as "createdAt", d.validated_at as "validatedAt", d.error,
  s.active_deploy_id as "activeDeployId"`;

/** A deploy with its site's pointer; a deleted deploy is still found. */
export async function deployById(em: EntityManager, id: string): Promise<DeployView | undefined> {
  const [row] = await sql<DeployView>(
    em,
    `select ${VIEW} from {deploys} d left join {sites} s on s.id = d.site_id where d.id = ?`,
    [id],
  );
  return row;
}

/** Up to `limit` of a site's deploys not deleted, newest first (ids sort by creation), before the cursor's id. */
export function deploysOfSite(em: EntityManager, siteId: string, before: string, limit: number): Promise<DeployView[]> {
  return sql<DeployView>(
    em,
    `select ${VIEW} from {deploys} d join {sites} s on s.id = d.site_id
      where d.site_id = ? and d.state <> 'deleted' and (? = '' or d.id < ?)
      order by d.id desc limit ?`,
    [siteId, before, before, limit],
  );
}

/** A deploy's upload log, in order. */
export async function deployLog(em: EntityManager, id: string): Promise<LogEntry[]> {
  const rows = await em.find(DeployLogRow, { deployId: id }, { orderBy: { seq: "asc" } });
  return rows.map((row) => create(LogEntrySchema, row));
}

/** Opens an upload of a site of a locked project: a deploy `validating`, and the limits it is validated against. */
export async function openDeploy(
  em: EntityManager,
  project: ProjectRow,
  deploy: { id: string; siteId: string; createdBy: string; createdAt: Date },
): Promise<{ row: DeployRow; limits: UploadLimits }> {
  const used = Number((await usageOf(em, project.id)).storageBytes);
  const row = em.create(DeployRow, { ...deploy, projectId: project.id, state: "validating", bytes: 0 });
  await em.flush();
  return {
    row,
    limits: {
      deployFiles: project.quotaDeployFiles,
      deployBytes: project.quotaDeployBytes,
      fileBytes: project.quotaFileBytes,
      storageLeft: Math.max(0, project.quotaStorageBytes - used),
    },
  };
}

/** By how many bytes a deploy of `bytes` would take its project past its storage quota (0: it fits), the project locked. */
export async function storageOver(em: EntityManager, projectId: string, bytes: number): Promise<number> {
  const project = await lockedProject(em, projectId);
  const used = Number((await usageOf(em, project.id)).storageBytes);
  return Math.max(0, used + bytes - project.quotaStorageBytes);
}

/** Closes an upload as ready with its manifest; false when it is no longer validating (deleted, or swept). */
export async function readyDeploy(
  em: EntityManager,
  id: string,
  done: { files: ManifestFile[]; bytes: number; digest: string; at: Date },
  log: LogLine[],
): Promise<boolean> {
  const [changed] = await sql(
    em,
    `update {deploys} set state = 'ready', files = ?, bytes = ?, digest = ?, validated_at = ?
      where id = ? and state = 'validating' returning id`,
    [done.files.length, done.bytes, done.digest, done.at, id],
  );
  if (!changed) return false;
  for (let at = 0; at < done.files.length; at += ROWS)
    await em.insertMany(
      DeployFileRow,
      done.files.slice(at, at + ROWS).map((file) => ({ deployId: id, ...file })),
    );
  await insertLog(em, id, log);
  return true;
}

/** Closes an upload as failed with its log (`error`: the first reason); false when it is no longer validating. */
export async function failDeploy(
  em: EntityManager,
  id: string,
  error: string,
  log: LogLine[],
  at: Date,
): Promise<boolean> {
  const [changed] = await sql(
    em,
    `update {deploys} set state = 'failed', files = 0, bytes = 0, validated_at = ?, error = ?
      where id = ? and state = 'validating' returning id`,
    [at, error, id],
  );
  if (!changed) return false;
  await insertLog(em, id, log);
  return true;
}

/** Rows per insert: a statement's parameters are bounded. */
const ROWS = 1000;

async function insertLog(em: EntityManager, deployId: string, log: LogLine[]): Promise<void> {
  for (let at = 0; at < log.length; at += ROWS)
    await em.insertMany(
      DeployLogRow,
      log.slice(at, at + ROWS).map((line, index) => ({ deployId, seq: at + index + 1, ...line })),
    );
}

/** Deploys left validating since before `before` (their upload's process is gone), at most `limit`, oldest first. */
export async function abandonedDeploys(em: EntityManager, before: Date, limit: number): Promise<DeployRow[]> {
  return em.find(DeployRow, { state: "validating", createdAt: { $lt: before } }, { orderBy: { id: "asc" }, limit });
}

/** Points the site at a ready deploy of its own; false when the deploy is not (or no longer) that. */
export async function pointSiteAt(em: EntityManager, siteId: string, deployId: string): Promise<boolean> {
  const rows = await sql(
    em,
    `update {sites} s set active_deploy_id = d.id from {deploys} d
      where s.id = ? and d.id = ? and d.site_id = s.id and d.state = 'ready' returning s.id`,
    [siteId, deployId],
  );
  return rows.length > 0;
}

/** Marks a deploy deleted and removes its file rows (the sweep frees their blobs); false when it already was. */
export async function deleteDeployRow(em: EntityManager, id: string): Promise<boolean> {
  const rows = await sql(
    em,
    `update {deploys} set state = 'deleted' where id = ? and state <> 'deleted' returning id`,
    [id],
  );
  if (rows.length === 0) return false;
  await sql(em, `delete from {deploy_files} where deploy_id = ?`, [id]);
  return true;
}
