import { type EntityManager, LockMode } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { sql } from "../../kit/db/sql.js";
import { resolveSlug } from "../../kit/slugs/slugs.js";
import { AliasRow, EntityRow, HistoryRow, LinkRow, MergeRow } from "./entities.js";

/** The slug scope of entities (kit/slugs). */
export const ENTITY_SLUGS = "entities";

/** The entity a path's `{ref}` names: an id, or a slug (`moved` when it is an old one). Deleted ones are not found. */
export async function entityByRef(
  em: EntityManager,
  ref: string,
  lock = false,
): Promise<{ row: EntityRow; moved: boolean } | undefined> {
  let id = ref;
  let moved = false;
  if (!ref.startsWith("ent_")) {
    const target = await resolveSlug(em, ENTITY_SLUGS, ref.toLowerCase());
    if (!target) return undefined;
    id = target.objectId;
    moved = target.moved || target.slug !== ref;
  }
  const row = await em.findOne(EntityRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  return row && row.state !== "deleted" ? { row, moved } : undefined;
}

/** Entities by id, in the order asked. */
export async function entitiesById(em: EntityManager, ids: string[]): Promise<EntityRow[]> {
  if (ids.length === 0) return [];
  const rows = await em.find(EntityRow, { id: { $in: [...new Set(ids)] } });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The entity and every entity merged into it, directly or through others: whose signals its aggregate covers. */
export async function treeOf(em: EntityManager, rootId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `with recursive tree(id) as (
       select id from {entities} where id = ?
       union select e.id from {entities} e join tree t on e.merged_into = t.id where e.state = 'merged')
     select id from tree order by id`,
    [rootId],
  );
  return rows.map((row) => row.id);
}

/** The active entity an entity answers as: itself, or the end of its merged_into chain, with the chain walked. */
export async function rootOf(em: EntityManager, row: EntityRow): Promise<{ root: EntityRow; chain: string[] }> {
  const chain: string[] = [];
  let at = row;
  while (at.state === "merged" && at.mergedInto) {
    chain.push(at.id);
    const next = await em.findOne(EntityRow, { id: at.mergedInto });
    if (!next) break;
    at = next;
  }
  return { root: at, chain };
}

/** The entity owning an identifier (every alias kind but name), or null. */
export function aliasOwner(em: EntityManager, kind: string, normalized: string): Promise<AliasRow | null> {
  return em.findOne(AliasRow, { kind, normalized });
}

/** The candidates of a name: entities whose name or a name alias reads the same, by name then id. */
export async function candidatesByName(em: EntityManager, key: string): Promise<EntityRow[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select e.id from {entities} e
     where e.state <> 'deleted' and (e.name_key = ? or exists (
       select 1 from {aliases} a where a.entity_id = e.id and a.kind = 'name' and a.normalized = ?))
     order by e.name_key, e.id limit 20`,
    [key, key],
  );
  return entitiesById(
    em,
    rows.map((row) => row.id),
  );
}

/** An entity's aliases, by kind then value. */
export function aliasesOf(em: EntityManager, entityIds: string[]): Promise<AliasRow[]> {
  if (entityIds.length === 0) return Promise.resolve([]);
  return em.find(
    AliasRow,
    { entityId: { $in: entityIds } },
    { orderBy: { kind: "asc", normalized: "asc", id: "asc" } },
  );
}

/** Adds an alias; answers the existing one when the entity already has it. */
export async function insertAlias(
  em: EntityManager,
  alias: { entityId: string; kind: string; value: string; normalized: string; by: string; at: Date },
): Promise<{ row: AliasRow; created: boolean }> {
  const existing = await em.findOne(AliasRow, {
    entityId: alias.entityId,
    kind: alias.kind,
    normalized: alias.normalized,
  });
  if (existing) return { row: existing, created: false };
  const row = em.create(AliasRow, {
    id: newId("als"),
    entityId: alias.entityId,
    kind: alias.kind,
    value: alias.value,
    normalized: alias.normalized,
    createdBy: alias.by,
    createdAt: alias.at,
  });
  await em.flush();
  return { row, created: true };
}

/** Removes an alias of the entity; answers it, or null when the entity has no such alias. */
export async function deleteAlias(em: EntityManager, entityId: string, id: string): Promise<AliasRow | null> {
  const row = await em.findOne(AliasRow, { id, entityId });
  if (row) await em.nativeDelete(AliasRow, { id });
  return row;
}

/** Frees every alias of a deleted entity (its identifiers may name another). */
export async function deleteAliasesOf(em: EntityManager, entityId: string): Promise<void> {
  await em.nativeDelete(AliasRow, { entityId });
}

/** An entity's links, oldest first. */
export function linksOf(em: EntityManager, entityIds: string[]): Promise<LinkRow[]> {
  if (entityIds.length === 0) return Promise.resolve([]);
  return em.find(LinkRow, { entityId: { $in: entityIds } }, { orderBy: { id: "asc" } });
}

/** The entities merged directly into these, by id. */
export async function mergedFrom(em: EntityManager, ids: string[]): Promise<Map<string, string[]>> {
  const rows = ids.length
    ? await em.find(EntityRow, { mergedInto: { $in: ids }, state: "merged" }, { orderBy: { id: "asc" } })
    : [];
  const map = new Map<string, string[]>();
  for (const row of rows) map.set(row.mergedInto!, [...(map.get(row.mergedInto!) ?? []), row.id]);
  return map;
}

/** The merge links holding now, by merged entity. */
export async function currentMerges(em: EntityManager, ids: string[]): Promise<Map<string, MergeRow>> {
  const rows = ids.length ? await em.find(MergeRow, { entityId: { $in: ids }, splitAt: null }) : [];
  return new Map(rows.map((row) => [row.entityId, row]));
}

/** Records a history entry (insert-only). */
export async function recordHistory(
  em: EntityManager,
  entry: { entityId: string; action: string; actor: string; at: Date; detail: string },
): Promise<void> {
  await em.insert(HistoryRow, { id: newId("hst"), ...entry });
}

/** A page of an entity's history, newest first. */
export function historyPage(
  em: EntityManager,
  entityId: string,
  limit: number,
  before?: string,
): Promise<HistoryRow[]> {
  return em.find(
    HistoryRow,
    { entityId, ...(before ? { id: { $lt: before } } : {}) },
    { orderBy: { id: "desc" }, limit: limit + 1 },
  );
}

/** Adds a typed link. */
export async function insertLink(
  em: EntityManager,
  link: {
    entityId: string;
    type: string;
    targetEntity: string;
    targetService: string;
    targetKind: string;
    targetId: string;
    by: string;
    at: Date;
  },
): Promise<void> {
  const { by, at, ...rest } = link;
  await em.insert(LinkRow, { id: newId("lnk"), ...rest, createdBy: by, createdAt: at });
}

/** Removes a link of the entity; answers it, or null when the entity has no such link. */
export async function deleteLink(em: EntityManager, entityId: string, id: string): Promise<LinkRow | null> {
  const row = await em.findOne(LinkRow, { id, entityId });
  if (row) await em.nativeDelete(LinkRow, { id });
  return row;
}

/** Records a merge: the audited merged_into link. */
export async function insertMerge(
  em: EntityManager,
  merge: { entityId: string; intoId: string; by: string; at: Date; reason: string },
): Promise<MergeRow> {
  const row = em.create(MergeRow, {
    id: newId("mrg"),
    entityId: merge.entityId,
    intoId: merge.intoId,
    mergedBy: merge.by,
    mergedAt: merge.at,
    reason: merge.reason,
    splitBy: null,
    splitAt: null,
    splitReason: null,
  });
  await em.flush();
  return row;
}

/** The columns of an entity an editorial action changes. */
export type EntityChanges = Partial<
  Pick<
    EntityRow,
    | "name"
    | "nameKey"
    | "description"
    | "slug"
    | "state"
    | "mergedInto"
    | "limitation"
    | "verification"
    | "notesUpdatedBy"
    | "notesUpdatedAt"
  >
>;

/** An editorial change of an entity (its row locked by the caller): the columns given, a new version and time. */
export async function changeEntity(em: EntityManager, row: EntityRow, changes: EntityChanges, at: Date): Promise<void> {
  Object.assign(row, changes);
  row.version += 1;
  row.updatedAt = at;
  await em.flush();
}

/** Ends a merge link (who, when, why kept on it) and makes the merged entity active again. */
export async function endMerge(
  em: EntityManager,
  row: EntityRow,
  merge: MergeRow,
  split: { by: string; at: Date; reason: string },
): Promise<void> {
  merge.splitBy = split.by;
  merge.splitAt = split.at;
  merge.splitReason = split.reason;
  await changeEntity(em, row, { state: "active", mergedInto: null }, split.at);
}

/** Creates an entity row (its slug claimed by the caller). */
export async function insertEntity(
  em: EntityManager,
  entity: { id: string; slug: string; name: string; nameKey: string; description: string; by: string; at: Date },
): Promise<EntityRow> {
  const { by, at, ...rest } = entity;
  const row = em.create(EntityRow, {
    ...rest,
    state: "active",
    mergedInto: null,
    limitation: "",
    verification: "",
    notesUpdatedBy: "",
    notesUpdatedAt: null,
    summaryRevisions: 0,
    version: 1,
    createdBy: by,
    createdAt: at,
    updatedAt: at,
  });
  await em.flush();
  return row;
}
