import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import type { ClusterChange, ClusterState, Explanation, Move } from "../domain/clusters.js";
import { sql } from "../../kit/db/sql.js";

/** A cluster as stored. */
export interface ClusterRecord {
  id: string;
  state: ClusterState["state"];
  merged_into: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A membership as stored. */
export interface MemberRecord {
  item_id: string;
  cluster_id: string;
  method: string;
  evidence: string;
  score: number;
  by: string | null;
  at: Date;
}

/** An audit entry as stored. */
export interface AuditRecord {
  id: string;
  action: "merge" | "split" | "reverse";
  cluster_id: string;
  moves: Move[];
  clusters: ClusterChange[];
  reason: string;
  by: string;
  at: Date;
  reverses: string | null;
  reversed_by: string | null;
}

/** Makes an active cluster; answers its id. */
export async function insertCluster(em: EntityManager, at: Date): Promise<string> {
  const id = newId("ncl");
  await sql(em, `insert into {clusters} (id, state, created_at, updated_at) values (?, 'active', ?, ?)`, [id, at, at]);
  return id;
}

/** Puts an item in a cluster with the explanation of its membership (replacing any other). */
export async function setMembership(em: EntityManager, item: string, cluster: string, why: Explanation): Promise<void> {
  await sql(
    em,
    `insert into {cluster_members} (item_id, cluster_id, method, evidence, score, by, at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (item_id) do update set cluster_id = excluded.cluster_id, method = excluded.method,
       evidence = excluded.evidence, score = excluded.score, by = excluded.by, at = excluded.at`,
    [item, cluster, why.method, why.evidence, why.score, why.by, why.at],
  );
  await sql(em, `update {clusters} set updated_at = ? where id = ?`, [why.at, cluster]);
}

/** Locks clusters in id order (so two changes never deadlock); answers those that exist. */
export async function lockClusters(em: EntityManager, ids: string[]): Promise<Map<string, ClusterRecord>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<ClusterRecord>(em, `select * from {clusters} where id in (?) order by id for update`, [ids]);
  return new Map(rows.map((row) => [row.id, row]));
}

/** Sets a cluster's state. */
export async function setClusterState(em: EntityManager, id: string, state: ClusterState, at: Date): Promise<void> {
  await sql(em, `update {clusters} set state = ?, merged_into = ?, updated_at = ? where id = ?`, [
    state.state,
    state.mergedInto,
    at,
    id,
  ]);
}

/** The members of clusters, oldest membership first. */
export function membersOf(em: EntityManager, clusterIds: string[]): Promise<MemberRecord[]> {
  if (clusterIds.length === 0) return Promise.resolve([]);
  return sql<MemberRecord>(em, `select * from {cluster_members} where cluster_id in (?) order by at, item_id`, [
    clusterIds,
  ]);
}

/** Memberships of items. */
export async function membershipsOf(em: EntityManager, items: string[]): Promise<Map<string, MemberRecord>> {
  if (items.length === 0) return new Map();
  const rows = await sql<MemberRecord>(em, `select * from {cluster_members} where item_id in (?) for update`, [items]);
  return new Map(rows.map((row) => [row.item_id, row]));
}

/** A cluster, or undefined. */
export async function clusterById(em: EntityManager, id: string): Promise<ClusterRecord | undefined> {
  const [row] = await sql<ClusterRecord>(em, `select * from {clusters} where id = ?`, [id]);
  return row;
}

/** A page of clusters, newest change first. */
export function clusterPage(
  em: EntityManager,
  options: { all: boolean; before?: [string, string]; limit: number },
): Promise<ClusterRecord[]> {
  const where = [options.all ? "true" : "state = 'active'"];
  const params: unknown[] = [];
  if (options.before) {
    where.push("(updated_at, id) < (?, ?)");
    params.push(options.before[0], options.before[1]);
  }
  return sql<ClusterRecord>(
    em,
    `select * from {clusters} where ${where.join(" and ")} order by updated_at desc, id desc limit ?`,
    [...params, options.limit + 1],
  );
}

/** Records an audited change and the items it moved. */
export async function insertAudit(em: EntityManager, audit: AuditRecord): Promise<void> {
  await sql(
    em,
    `insert into {cluster_audits} (id, action, cluster_id, moves, clusters, reason, by, at, reverses)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      audit.id,
      audit.action,
      audit.cluster_id,
      JSON.stringify(audit.moves),
      JSON.stringify(audit.clusters),
      audit.reason,
      audit.by,
      audit.at,
      audit.reverses,
    ],
  );
  for (const item of new Set(audit.moves.map((move) => move.item)))
    await sql(em, `insert into {cluster_audit_items} (audit_id, item_id) values (?, ?)`, [audit.id, item]);
  if (audit.reverses)
    await sql(em, `update {cluster_audits} set reversed_by = ? where id = ?`, [audit.id, audit.reverses]);
}

/** An audit entry, locked. */
export async function lockAudit(em: EntityManager, id: string): Promise<AuditRecord | undefined> {
  const [row] = await sql<AuditRecord>(em, `select * from {cluster_audits} where id = ? for update`, [id]);
  return row;
}

/**
 * The first later audit entry still standing that moved any of these items;
 * undefined when none did. A later change since reversed, and the reversal of
 * a later change, no longer stand: undoing changes newest first works.
 */
export async function laterChangeOf(em: EntityManager, audit: string, items: string[]): Promise<string | undefined> {
  const [row] = await sql<{ audit_id: string }>(
    em,
    `select i.audit_id from {cluster_audit_items} i join {cluster_audits} a on a.id = i.audit_id
     where i.item_id in (?) and i.audit_id > ? and a.reversed_by is null and coalesce(a.reverses, '') <= ?
     order by i.audit_id limit 1`,
    [items, audit, audit],
  );
  return row?.audit_id;
}

/** A cluster's audit entries, newest first: those naming it or moving items in or out of it. */
export function historyOf(em: EntityManager, cluster: string): Promise<AuditRecord[]> {
  return sql<AuditRecord>(
    em,
    `select * from {cluster_audits} where cluster_id = ? or clusters @> ?::jsonb order by id desc limit 200`,
    [cluster, JSON.stringify([{ id: cluster }])],
  );
}

/** The live, non-duplicate items of a cluster, oldest first (a story's first sources). */
export async function liveItemsOf(em: EntityManager, cluster: string): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select i.id from {cluster_members} m join {source_items} i on i.id = m.item_id
     where m.cluster_id = ? and i.removed_at is null and i.dedupe = 'unique'
     order by coalesce(i.published_at, i.received_at), i.id`,
    [cluster],
  );
  return rows.map((row) => row.id);
}
