import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { type AggregateOf, aggregateOf } from "../domain/aggregate.js";
import { ExclusionRow, SignalRow } from "./entities.js";

/** A signal as written. */
export interface SignalInput {
  entityId: string;
  kind: "rating" | "mention";
  score: number;
  scale: number;
  text: string;
  sourceKey: string;
  sourceRef: string;
  url: string;
  observedAt: Date | null;
  ingestedBy: string;
  itemId: string;
  at: Date;
}

/**
 * Records a signal once per (source_key, source_ref): answers the stored one
 * and whether this call wrote it (a replay finds the first, which the caller
 * compares).
 */
export async function insertSignal(
  em: EntityManager,
  input: SignalInput,
): Promise<{ row: SignalRow; created: boolean }> {
  const existing = await em.findOne(SignalRow, { sourceKey: input.sourceKey, sourceRef: input.sourceRef });
  if (existing) return { row: existing, created: false };
  const { at, ...rest } = input;
  const row = em.create(SignalRow, { id: newId("sig"), ...rest, recordedAt: at });
  await em.flush();
  return { row, created: true };
}

/** Signals attributed to these entities, newest first, from before the cursor's id. */
export function signalsOf(
  em: EntityManager,
  entityIds: string[],
  limit: number,
  before?: string,
): Promise<SignalRow[]> {
  if (entityIds.length === 0) return Promise.resolve([]);
  return em.find(
    SignalRow,
    { entityId: { $in: entityIds }, ...(before ? { id: { $lt: before } } : {}) },
    { orderBy: { id: "desc" }, limit: limit + 1 },
  );
}

/** The signals of these ids that are attributed to one of the entities. */
export async function signalIdsWithin(em: EntityManager, ids: string[], entityIds: string[]): Promise<Set<string>> {
  if (ids.length === 0 || entityIds.length === 0) return new Set();
  const rows = await em.find(SignalRow, { id: { $in: ids }, entityId: { $in: entityIds } }, { fields: ["id"] });
  return new Set(rows.map((row) => row.id));
}

/** A signal by id. */
export function signalById(em: EntityManager, id: string): Promise<SignalRow | null> {
  return em.findOne(SignalRow, { id });
}

/** The exclusions set on these entities, by id. */
export function exclusionsOf(em: EntityManager, entityIds: string[]): Promise<ExclusionRow[]> {
  if (entityIds.length === 0) return Promise.resolve([]);
  return em.find(ExclusionRow, { entityId: { $in: entityIds } }, { orderBy: { id: "asc" } });
}

/** Adds an exclusion. */
export async function insertExclusion(
  em: EntityManager,
  input: { entityId: string; signalId: string; sourceKey: string; reason: string; by: string; at: Date },
): Promise<ExclusionRow> {
  const row = em.create(ExclusionRow, {
    id: newId("exc"),
    entityId: input.entityId,
    signalId: input.signalId,
    sourceKey: input.sourceKey,
    reason: input.reason,
    createdBy: input.by,
    createdAt: input.at,
  });
  await em.flush();
  return row;
}

/** Ends an exclusion of the entity; answers it, or null when the entity has none of that id. */
export async function deleteExclusion(em: EntityManager, entityId: string, id: string): Promise<ExclusionRow | null> {
  const row = await em.findOne(ExclusionRow, { id, entityId });
  if (row) await em.nativeDelete(ExclusionRow, { id });
  return row;
}

/**
 * The aggregate of a tree of entities (an entity and those merged into it),
 * recomputed from the stored signals and exclusions on every read, so it is
 * always the deterministic function of its inputs (hardest rule 4): a merge,
 * split, exclusion or signal shows at once. Every exclusion set on an entity
 * of the tree applies to the whole tree.
 */
export async function aggregateOfTree(em: EntityManager, entityIds: string[]): Promise<AggregateOf> {
  if (entityIds.length === 0) return aggregateOf([], []);
  const ratings = await em.find(SignalRow, { entityId: { $in: entityIds }, kind: "rating" });
  const exclusions = await exclusionsOf(em, entityIds);
  return aggregateOf(
    ratings.map(({ id, entityId, sourceKey, score, scale }) => ({ id, entityId, sourceKey, score, scale })),
    exclusions.map(({ id, signalId, sourceKey, reason }) => ({ id, signalId, sourceKey, reason })),
  );
}

/** The ids of every signal attributed to these entities. */
export async function signalIdsOf(em: EntityManager, entityIds: string[]): Promise<Set<string>> {
  if (entityIds.length === 0) return new Set();
  const rows = await em.find(SignalRow, { entityId: { $in: entityIds } }, { fields: ["id"] });
  return new Set(rows.map((row) => row.id));
}
