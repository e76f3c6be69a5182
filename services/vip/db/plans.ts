import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  PlanSchema,
  PlanVersionSchema,
  VersionState,
  type Plan,
  type PlanVersion,
} from "../../../gen/pf/vip/v1/plans_pb.js";
import { PLAN_STATUS, versionState, type Status, type Terms } from "../domain/plans.js";
import { PerkRow, PlanRow, PlanVersionRow, PublicationRow } from "./entities.js";
import { perksForPlan, snapshotOf, versionPerkToProto } from "./perks.js";

/** A plan with the versions an answer shows, their publications and the live perks of unpublished ones. */
export interface PlanView {
  row: PlanRow;
  versions: PlanVersionRow[];
  publications: Map<number, PublicationRow>;
  perks: Map<string, PerkRow>;
}

/** A plan version named by its plan. */
export type VersionKey = { planId: string; version: number };

/**
 * Where plan answers read their rows: the EntityManager (inside a transaction)
 * or hot reads (plan-reads.ts). Versions come newest first.
 */
export interface PlanRows {
  plans(ids: string[]): Promise<PlanRow[]>;
  versionsOfPlans(ids: string[]): Promise<PlanVersionRow[]>;
  versions(keys: VersionKey[]): Promise<PlanVersionRow[]>;
  publications(keys: VersionKey[]): Promise<PublicationRow[]>;
  perks(ids: string[]): Promise<PerkRow[]>;
}

const ormRows = (em: EntityManager): PlanRows => ({
  plans: (ids) => em.find(PlanRow, { id: { $in: ids } }),
  versionsOfPlans: (ids) => em.find(PlanVersionRow, { planId: { $in: ids } }, { orderBy: { version: "desc" } }),
  versions: (keys) => em.find(PlanVersionRow, { $or: keys }, { orderBy: { version: "desc" } }),
  publications: (keys) => em.find(PublicationRow, { $or: keys }),
  perks: (ids) => em.find(PerkRow, { id: { $in: ids } }),
});

/** Loads what answers need: every version with `history`, else the current and draft ones. */
export function loadPlans(em: EntityManager, rows: PlanRow[], history: boolean): Promise<PlanView[]> {
  return planViews(ormRows(em), rows, history);
}

export async function planViews(read: PlanRows, rows: PlanRow[], history: boolean): Promise<PlanView[]> {
  if (rows.length === 0) return [];
  const pairs = rows.flatMap((row) =>
    [row.currentVersion, row.draftVersion].flatMap((version) => (version == null ? [] : [{ planId: row.id, version }])),
  );
  const versions = history
    ? await read.versionsOfPlans(rows.map((row) => row.id))
    : pairs.length === 0
      ? []
      : await read.versions(pairs);
  const publications =
    versions.length === 0
      ? []
      : await read.publications(versions.map((v) => ({ planId: v.planId, version: v.version })));
  const unpublished = versions.filter(
    (v) => !publications.some((p) => p.planId === v.planId && p.version === v.version),
  );
  const perkIds = [...new Set(unpublished.flatMap((v) => v.perkIds))];
  const perks = perkIds.length === 0 ? [] : await read.perks(perkIds);
  const perkMap = new Map(perks.map((perk) => [perk.id, perk]));
  return rows.map((row) => ({
    row,
    versions: versions.filter((v) => v.planId === row.id),
    publications: new Map(publications.filter((p) => p.planId === row.id).map((p) => [p.version, p])),
    perks: perkMap,
  }));
}

export function versionToProto(view: PlanView, version: PlanVersionRow): PlanVersion {
  const publication = view.publications.get(version.version);
  const perks = publication
    ? publication.perks
    : version.perkIds.flatMap((id) => {
        const perk = view.perks.get(id);
        return perk ? [snapshotOf(perk)] : [];
      });
  return create(PlanVersionSchema, {
    version: BigInt(version.version),
    state: versionState(view.row, version.version, publication !== undefined),
    name: version.name,
    description: version.description,
    tier: version.tier,
    perks: perks.map(versionPerkToProto),
    createdBy: version.createdBy,
    createdAt: timestampFromDate(version.createdAt),
    publishedAt: publication ? timestampFromDate(publication.publishedAt) : undefined,
  });
}

/** A plan as `seesAll` (the grant or the owner) or anyone else may see it: others see no draft and only published versions. */
export function planToProto(view: PlanView, seesAll: boolean, history: boolean): Plan {
  const { row } = view;
  const all = view.versions.map((version) => versionToProto(view, version));
  const find = (version: number | null | undefined) =>
    all.find((v) => version != null && v.version === BigInt(version));
  return create(PlanSchema, {
    id: row.id,
    owner: row.owner,
    status: PLAN_STATUS[row.status as Status],
    currentVersion: find(row.currentVersion),
    draftVersion: seesAll ? find(row.draftVersion) : undefined,
    versions: history
      ? all.filter((v) => seesAll || v.state === VersionState.CURRENT || v.state === VersionState.SUPERSEDED)
      : [],
    revision: BigInt(row.revision),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    publishedAt: row.publishedAt ? timestampFromDate(row.publishedAt) : undefined,
    archivedAt: row.archivedAt ? timestampFromDate(row.archivedAt) : undefined,
  });
}

/** The plan of this id, or null; locked for the rest of the transaction when asked. */
export function planById(em: EntityManager, id: string, lock = false): Promise<PlanRow | null> {
  return em.findOne(PlanRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** A version of a plan that exists (the plan names it as current or draft). */
export function planVersion(em: EntityManager, planId: string, version: number): Promise<PlanVersionRow> {
  return em.findOneOrFail(PlanVersionRow, { planId, version });
}

/** How many plans an owner keeps that are not archived. */
export const livePlanCount = (em: EntityManager, owner: string) =>
  em.count(PlanRow, { owner, status: { $ne: "archived" } });

/** A new plan, written with its first version by the caller's `changePlan`. */
export const newPlan = (em: EntityManager, plan: RequiredEntityData<PlanRow>): PlanRow => em.create(PlanRow, plan);

/** Writes changes to a plan (those made on the row and its new versions, and `changes`) in the caller's transaction. */
export async function changePlan(em: EntityManager, plan: PlanRow, changes: Partial<PlanRow> = {}): Promise<void> {
  Object.assign(plan, changes);
  await em.flush();
}

/** Writes the next version of a plan (insert-only) and makes it the draft; the caller publishes it when it goes live at once. */
export async function addVersion(
  em: EntityManager,
  plan: PlanRow,
  terms: Terms,
  by: string,
  at: Date,
  perksField: string,
): Promise<PlanVersionRow> {
  await perksForPlan(em, plan.owner, terms.perkIds, perksField);
  const version = em.create(PlanVersionRow, {
    planId: plan.id,
    version: plan.latestVersion + 1,
    ...terms,
    createdBy: by,
    createdAt: at,
  });
  Object.assign(plan, { latestVersion: version.version, draftVersion: version.version });
  return version;
}

/** Publishes the draft version: its perks are snapshotted as they are now; it becomes the version new members join under. */
export async function publishDraft(
  em: EntityManager,
  plan: PlanRow,
  draft: PlanVersionRow,
  by: string,
  at: Date,
): Promise<void> {
  const perks = await perksForPlan(em, plan.owner, draft.perkIds, "perks.perk_ids");
  em.create(PublicationRow, {
    planId: plan.id,
    version: draft.version,
    perks: perks.map(snapshotOf),
    publishedBy: by,
    publishedAt: at,
  });
  Object.assign(plan, {
    status: "published",
    currentVersion: draft.version,
    draftVersion: null,
    publishedAt: plan.publishedAt ?? at,
  });
}

/** The terms of a version row. */
export function termsOf(version: PlanVersionRow): Terms {
  return { name: version.name, description: version.description, tier: version.tier, perkIds: version.perkIds };
}

/** The proto of each (plan, version) asked for, with its publication's perk snapshot; keyed `plan:version`. */
export function versionsOf(em: EntityManager, pairs: VersionKey[]): Promise<Map<string, PlanVersion>> {
  return versionViews(ormRows(em), pairs);
}

export async function versionViews(read: PlanRows, pairs: VersionKey[]): Promise<Map<string, PlanVersion>> {
  const found = new Map<string, PlanVersion>();
  if (pairs.length === 0) return found;
  const plans = await read.plans([...new Set(pairs.map((pair) => pair.planId))]);
  const keys = pairs.map(({ planId, version }) => ({ planId, version }));
  const versions = await read.versions(keys);
  const publications = await read.publications(keys);
  for (const plan of plans) {
    const view: PlanView = {
      row: plan,
      versions: [],
      publications: new Map(publications.filter((p) => p.planId === plan.id).map((p) => [p.version, p])),
      perks: new Map(),
    };
    for (const version of versions.filter((v) => v.planId === plan.id))
      found.set(`${plan.id}:${version.version}`, versionToProto(view, version));
  }
  return found;
}
