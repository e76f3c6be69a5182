import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  LockMode,
  UniqueConstraintViolationException,
  type EntityManager,
  type RequiredEntityData,
} from "@mikro-orm/postgresql";
import { type Release, ReleaseSchema, ReleaseStatus, type TrustTier } from "../../../gen/pf/codes/v1/releases_pb.js";
import { ReleaseRow } from "./entities.js";

/** A release by id, whatever its state (manage routes); null when missing. */
export function releaseById(em: EntityManager, id: string): Promise<ReleaseRow | null> {
  return em.findOne(ReleaseRow, { id });
}

/** A release by id for a manage action, locked until the transaction ends so two actions apply one after the other. */
export function releaseForUpdate(em: EntityManager, id: string): Promise<ReleaseRow | null> {
  return em.findOne(ReleaseRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** A release as every read sees it: once published (so never a draft, nor a draft revoked unpublished). */
export function publicRelease(em: EntityManager, id: string): Promise<ReleaseRow | null> {
  return em.findOne(ReleaseRow, { id, publishedAt: { $ne: null } });
}

/** Up to `rows` of an app's public releases, newest first, before the cursor's id. */
export function publicReleasesOf(em: EntityManager, app: string, before: string | undefined, rows: number) {
  const where = before === undefined ? { app } : { app, id: { $lt: before } };
  return em.find(ReleaseRow, { ...where, publishedAt: { $ne: null } }, { orderBy: { id: "desc" }, limit: rows });
}

/** The release of an app holding a version (by semver precedence), if any. */
export function releaseOfVersion(em: EntityManager, app: string, versionKey: string): Promise<ReleaseRow | null> {
  return em.findOne(ReleaseRow, { app, versionKey });
}

/**
 * Inserts a new release; a concurrent create of the same version loses on the
 * unique key and answers null, as one found first does.
 */
export async function insertRelease(
  em: EntityManager,
  row: RequiredEntityData<ReleaseRow>,
): Promise<ReleaseRow | null> {
  const created = em.create(ReleaseRow, row);
  try {
    await em.flush();
    return created;
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) return null;
    throw error;
  }
}

/** Writes changes to a release (those made on the row, and `changes`) in the caller's transaction. */
export async function changeRelease(em: EntityManager, row: ReleaseRow, changes: Partial<ReleaseRow> = {}) {
  Object.assign(row, changes);
  await em.flush();
}

const STATUS: Record<string, ReleaseStatus> = {
  draft: ReleaseStatus.DRAFT,
  published: ReleaseStatus.PUBLISHED,
  deprecated: ReleaseStatus.DEPRECATED,
  revoked: ReleaseStatus.REVOKED,
};

const at = (date: Date | null | undefined) => (date ? timestampFromDate(date) : undefined);

/** A release as answered, with its app's trust tier (metadata). */
export function releaseAnswer(row: ReleaseRow, trustTier: TrustTier): Release {
  return create(ReleaseSchema, {
    id: row.id,
    app: row.app,
    kind: row.kind,
    version: row.version,
    compatibility: row.compatibility,
    manifest: row.manifest as JsonObject,
    status: STATUS[row.status],
    deprecationReason: row.deprecationReason ?? "",
    replacement: row.replacement ?? "",
    revocationReason: row.revocationReason ?? "",
    trustTier,
    createdAt: at(row.createdAt),
    publishedAt: at(row.publishedAt),
    deprecatedAt: at(row.deprecatedAt),
    revokedAt: at(row.revokedAt),
  });
}
