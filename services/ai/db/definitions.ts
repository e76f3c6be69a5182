import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  DefinitionSchema,
  DefinitionVersionSchema,
  type Definition,
  type DefinitionVersion,
} from "../../../gen/pf/ai/v1/definitions_pb.js";
import { sql } from "../../kit/db/sql.js";
import type { DefinitionKind, RouteStatus, VersionStatus } from "../domain/definitions/lifecycle.js";

/** A definition as stored: its active version (0 when none is) and, for routes, `active` or `disabled`. */
export interface StoredDefinition {
  kind: DefinitionKind;
  key: string;
  status: string;
  activeVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

/** One version as stored: insert-only but for its status. */
export interface StoredVersion {
  kind: DefinitionKind;
  key: string;
  version: number;
  status: VersionStatus;
  body: JsonObject;
  note: string;
  createdBy: string;
  createdAt: Date;
  statusChangedBy: string;
  statusChangedAt: Date | null;
}

type Moment = Date | string;

interface DefinitionColumns {
  kind: DefinitionKind;
  key: string;
  status: string;
  active_version: number;
  created_at: Moment;
  updated_at: Moment;
}

interface VersionColumns {
  kind: DefinitionKind;
  key: string;
  version: number;
  status: VersionStatus;
  body: JsonObject | string;
  note: string;
  created_by: string;
  created_at: Moment;
  status_changed_by: string;
  status_changed_at: Moment | null;
}

const asDefinition = (row: DefinitionColumns): StoredDefinition => ({
  kind: row.kind,
  key: row.key,
  status: row.status,
  activeVersion: Number(row.active_version),
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const asVersion = (row: VersionColumns): StoredVersion => ({
  kind: row.kind,
  key: row.key,
  version: Number(row.version),
  status: row.status,
  body: typeof row.body === "string" ? (JSON.parse(row.body) as JsonObject) : row.body,
  note: row.note,
  createdBy: row.created_by,
  createdAt: new Date(row.created_at),
  statusChangedBy: row.status_changed_by,
  statusChangedAt: row.status_changed_at === null ? null : new Date(row.status_changed_at),
});

/** A definition; locked for the caller's transaction when `lock`, so its versions change one at a time. */
export async function definitionByKey(
  em: EntityManager,
  kind: DefinitionKind,
  key: string,
  lock = false,
): Promise<StoredDefinition | undefined> {
  const rows = await sql<DefinitionColumns>(
    em,
    `select * from {definitions} where kind = ? and key = ?${lock ? " for update" : ""}`,
    [kind, key],
  );
  return rows[0] && asDefinition(rows[0]);
}

/** One version of a definition. */
export async function versionByNumber(
  em: EntityManager,
  kind: DefinitionKind,
  key: string,
  version: number,
): Promise<StoredVersion | undefined> {
  const rows = await sql<VersionColumns>(
    em,
    `select * from {definition_versions} where kind = ? and key = ? and version = ?`,
    [kind, key, version],
  );
  return rows[0] && asVersion(rows[0]);
}

/** The versions of these definitions of one kind, oldest first. */
export async function versionsOf(em: EntityManager, kind: DefinitionKind, keys: string[]): Promise<StoredVersion[]> {
  if (keys.length === 0) return [];
  const rows = await sql<VersionColumns>(
    em,
    `select * from {definition_versions} where kind = ? and key in (?) order by key, version`,
    [kind, keys],
  );
  return rows.map(asVersion);
}

/**
 * Writes the next version of a definition as a draft, creating the definition with its first version (a route
 * starts active). The definition's row is locked before the number is taken: concurrent creations queue on it and
 * never share a number.
 */
export async function insertVersion(
  em: EntityManager,
  draft: { kind: DefinitionKind; key: string; body: JsonObject; note: string; createdBy: string; at: Date },
): Promise<StoredVersion> {
  const { kind, key, at } = draft;
  await sql(
    em,
    `insert into {definitions} (kind, key, status, active_version, created_at, updated_at)
     values (?, ?, ?, 0, ?, ?) on conflict do nothing`,
    [kind, key, kind === "route" ? "active" : "", at, at],
  );
  await definitionByKey(em, kind, key, true);
  const rows = await sql<VersionColumns>(
    em,
    `insert into {definition_versions} (kind, key, version, status, body, note, created_by, created_at)
     select ?, ?, coalesce(max(version), 0) + 1, 'draft', ?::jsonb, ?, ?, ?
       from {definition_versions} where kind = ? and key = ?
     returning *`,
    [kind, key, JSON.stringify(draft.body), draft.note, draft.createdBy, at, kind, key],
  );
  await sql(em, `update {definitions} set updated_at = ? where kind = ? and key = ?`, [at, kind, key]);
  return asVersion(rows[0]!);
}

/**
 * Moves a version to `status`, recording who and when. Activating one first deprecates the version active before
 * (answered, so its change is audited too) and makes it the definition's active version; deprecating the active
 * version leaves none active.
 */
export async function moveVersion(
  em: EntityManager,
  version: StoredVersion,
  status: VersionStatus,
  actor: string,
  at: Date,
): Promise<{ moved: StoredVersion; deprecated: StoredVersion[] }> {
  const { kind, key } = version;
  const move = (where: string, to: VersionStatus, params: unknown[]) =>
    sql<VersionColumns>(
      em,
      `update {definition_versions} set status = ?, status_changed_by = ?, status_changed_at = ?
       where kind = ? and key = ? and ${where} returning *`,
      [to, actor, at, kind, key, ...params],
    );
  const deprecated = status === "active" ? await move("status = 'active'", "deprecated", []) : [];
  const [moved] = await move("version = ?", status, [version.version]);
  // The definition's active version: this one once activated, none once the active one is deprecated.
  const active = status === "active" ? version.version : version.status === "active" ? 0 : null;
  await sql(
    em,
    `update {definitions} set active_version = coalesce(?, active_version), updated_at = ? where kind = ? and key = ?`,
    [active, at, kind, key],
  );
  return { moved: asVersion(moved!), deprecated: deprecated.map(asVersion) };
}

/** Sets a route active or disabled. */
export async function updateRouteStatus(em: EntityManager, key: string, status: RouteStatus, at: Date): Promise<void> {
  await sql(em, `update {definitions} set status = ?, updated_at = ? where kind = 'route' and key = ?`, [
    status,
    at,
    key,
  ]);
}

/** A page of definitions by (kind, key), `kind` only when given, from after the cursor's position. */
export async function definitionsPage(
  em: EntityManager,
  kind: DefinitionKind | undefined,
  after: [string, string] | undefined,
  limit: number,
): Promise<StoredDefinition[]> {
  const rows = await sql<DefinitionColumns>(
    em,
    `select * from {definitions}
     where (?::text is null or kind = ?) and (?::text is null or (kind, key) > (?, ?))
     order by kind, key limit ?`,
    [kind ?? null, kind ?? null, after?.[0] ?? null, after?.[0] ?? null, after?.[1] ?? null, limit],
  );
  return rows.map(asDefinition);
}

export function versionToProto(version: StoredVersion): DefinitionVersion {
  return create(DefinitionVersionSchema, {
    kind: version.kind,
    key: version.key,
    version: version.version,
    status: version.status,
    body: version.body,
    note: version.note,
    createdBy: version.createdBy,
    createdAt: timestampFromDate(version.createdAt),
    statusChangedBy: version.statusChangedBy,
    statusChangedAt: version.statusChangedAt ? timestampFromDate(version.statusChangedAt) : undefined,
  });
}

export function definitionToProto(definition: StoredDefinition, versions: StoredVersion[]): Definition {
  return create(DefinitionSchema, {
    kind: definition.kind,
    key: definition.key,
    status: definition.status,
    activeVersion: definition.activeVersion,
    versions: versions.map(versionToProto),
    createdAt: timestampFromDate(definition.createdAt),
    updatedAt: timestampFromDate(definition.updatedAt),
  });
}
