import type { EntityManager } from "@mikro-orm/postgresql";
import type { Cluster, ClusterAudit, ClusterManageRequest } from "../../gen/pf/news/v1/clusters_pb.js";
import { newId } from "../kit/handler/ids.js";
import { invalid, problem } from "../kit/handler/problem.js";
import type { ServiceContext } from "../kit/service/module.js";
import { auditToProto, clusterToProto } from "./db/answers.js";
import {
  type AuditRecord,
  insertAudit,
  insertCluster,
  laterChangeOf,
  lockAudit,
  lockClusters,
  membersOf,
  membershipsOf,
  setClusterState,
  setMembership,
} from "./db/clusters.js";
import { itemsById } from "./db/items.js";
import { type ClusterChange, type Explanation, inverseOf, type Move } from "./domain/clusters.js";
import { clusterChanged } from "./events.js";

/** What a change answers: its audit entry and the clusters it touched. */
export interface ChangeAnswer {
  audit: ClusterAudit;
  clusters: Cluster[];
}

const MAX_ITEMS = 500;

/**
 * A locked cluster that still takes changes: 404 cluster.not_found when missing, 409 cluster.merged when merged.
 * `field` names the request's list that named it (the route's own cluster is named by the path).
 */
function requireActive(locked: Map<string, { state: string }>, id: string, field?: string): void {
  const cluster = locked.get(id);
  const name = field ? `Cluster ${id}` : "This cluster";
  if (!cluster)
    throw problem(
      404,
      "cluster.not_found",
      field ? `No such cluster: ${id}.` : "No such cluster.",
      field ? { field } : undefined,
    );
  if (cluster.state !== "active") throw problem(409, "cluster.merged", `${name} is not active.`);
}

/** Merges the request's clusters into the named one: every member moves, each merged cluster points at it. */
export async function mergeClusters(
  ctx: ServiceContext,
  em: EntityManager,
  request: ClusterManageRequest,
  by: string,
): Promise<ChangeAnswer> {
  // Declared: reason not blank (at most 500 characters), at least one cluster.
  const { reason } = request;
  const others = [...new Set(request.clusterIds)];
  if (others.length > 50) throw invalid("cluster_ids", "At most 50 clusters at once.");
  if (others.includes(request.id)) throw invalid("cluster_ids", "A cluster cannot be merged into itself.");
  const locked = await lockClusters(em, [request.id, ...others]);
  requireActive(locked, request.id);
  for (const id of others) requireActive(locked, id, "cluster_ids");
  const at = ctx.clock.now();
  const after: Explanation = { method: "editor_merge", evidence: reason, score: 100, by, at: at.toISOString() };
  const moves = (await membersOf(em, others)).map((member) => moveOf(member, request.id, after));
  const clusters: ClusterChange[] = others.map((id) => ({
    id,
    before: { state: "active", mergedInto: null },
    after: { state: "merged", mergedInto: request.id },
  }));
  return apply(em, { action: "merge", cluster: request.id, moves, clusters, reason, by, at });
}

/** Splits the request's items off the named cluster into a new one. */
export async function splitCluster(
  ctx: ServiceContext,
  em: EntityManager,
  request: ClusterManageRequest,
  by: string,
): Promise<ChangeAnswer> {
  // Declared: reason not blank (at most 500 characters), at least one item.
  const { reason } = request;
  const items = [...new Set(request.itemIds)];
  if (items.length > MAX_ITEMS) throw invalid("item_ids", `At most ${MAX_ITEMS} items at once.`);
  const locked = await lockClusters(em, [request.id]);
  requireActive(locked, request.id);
  const members = await membershipsOf(em, items);
  const stranger = items.find((item) => members.get(item)?.cluster_id !== request.id);
  if (stranger !== undefined)
    throw problem(422, "cluster.item_not_member", `${stranger} is not a member of this cluster.`, {
      field: "item_ids",
    });
  if ((await membersOf(em, [request.id])).length === items.length)
    throw problem(422, "cluster.split_all", "A split leaves at least one item in the cluster.", { field: "item_ids" });
  const at = ctx.clock.now();
  const created = await insertCluster(em, at);
  const after: Explanation = { method: "editor_split", evidence: reason, score: 100, by, at: at.toISOString() };
  const moves = items.map((item) => moveOf(members.get(item)!, created, after));
  const clusters: ClusterChange[] = [
    { id: created, before: { state: "dissolved", mergedInto: null }, after: { state: "active", mergedInto: null } },
  ];
  return apply(em, { action: "split", cluster: request.id, moves, clusters, reason, by, at });
}

/**
 * Reverses an audited change exactly: every item back where it was with the
 * explanation it had, every cluster back to its state. 409
 * cluster.audit_superseded when a later change moved any of the same items
 * (a reversal is such a change: reversing twice is refused too).
 */
export async function reverseChange(
  ctx: ServiceContext,
  em: EntityManager,
  request: ClusterManageRequest,
  by: string,
): Promise<ChangeAnswer> {
  const { reason } = request; // declared: not blank, at most 500 characters
  const audit = await lockAudit(em, request.auditId);
  if (!audit) throw problem(404, "cluster_audit.not_found", "No such audit entry.");
  const inverse = inverseOf(audit.moves, audit.clusters);
  const touched = [...new Set([...inverse.moves.flatMap((m) => [m.from, m.to]), ...inverse.clusters.map((c) => c.id)])];
  await lockClusters(em, touched);
  const items = inverse.moves.map((move) => move.item);
  const later = items.length === 0 ? undefined : await laterChangeOf(em, audit.id, items);
  if (later !== undefined || audit.reversed_by !== null)
    throw problem(
      409,
      "cluster.audit_superseded",
      "A later change touched the same items: this one cannot be reversed.",
      {
        later_audit: later ?? audit.reversed_by ?? "",
      },
    );
  return apply(em, {
    action: "reverse",
    cluster: audit.cluster_id,
    moves: inverse.moves,
    clusters: inverse.clusters,
    reason,
    by,
    at: ctx.clock.now(),
    reverses: audit.id,
  });
}

function moveOf(
  member: {
    item_id: string;
    cluster_id: string;
    method: string;
    evidence: string;
    score: number;
    by: string | null;
    at: Date;
  },
  to: string,
  after: Explanation,
): Move {
  const before: Explanation = {
    method: member.method,
    evidence: member.evidence,
    score: member.score,
    by: member.by,
    at: new Date(member.at).toISOString(),
  };
  return { item: member.item_id, from: member.cluster_id, to, before, after };
}

/** Applies moves and cluster states, records the audit and its event; answers the clusters touched. */
async function apply(
  em: EntityManager,
  change: {
    action: AuditRecord["action"];
    cluster: string;
    moves: Move[];
    clusters: ClusterChange[];
    reason: string;
    by: string;
    at: Date;
    reverses?: string;
  },
): Promise<ChangeAnswer> {
  for (const move of change.moves) await setMembership(em, move.item, move.to, move.after);
  for (const cluster of change.clusters) await setClusterState(em, cluster.id, cluster.after, change.at);
  const audit: AuditRecord = {
    id: newId("cau"),
    action: change.action,
    cluster_id: change.cluster,
    moves: change.moves,
    clusters: change.clusters,
    reason: change.reason,
    by: change.by,
    at: change.at,
    reverses: change.reverses ?? null,
    reversed_by: null,
  };
  await insertAudit(em, audit);
  await clusterChanged(em, audit);
  const touched = [
    change.cluster,
    ...new Set([...change.moves.flatMap((m) => [m.from, m.to]), ...change.clusters.map((c) => c.id)]),
  ];
  return { audit: auditToProto(audit), clusters: await clustersOf(em, [...new Set(touched)]) };
}

/** Clusters with their members, in the order given. */
export async function clustersOf(em: EntityManager, ids: string[]): Promise<Cluster[]> {
  const locked = await lockClusters(em, ids);
  const members = await membersOf(em, ids);
  const items = await itemsById(
    em,
    members.map((member) => member.item_id),
  );
  return ids
    .filter((id) => locked.has(id))
    .map((id) =>
      clusterToProto(
        locked.get(id)!,
        members.filter((member) => member.cluster_id === id),
        items,
      ),
    );
}
