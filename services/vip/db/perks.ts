import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { PerkSchema, VersionPerkSchema, type Perk, type VersionPerk } from "../../../gen/pf/vip/v1/plans_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { NETWORK } from "../domain/access.js";
import { PERK_KINDS, PERK_STATUS, type Kind } from "../domain/perks.js";
import { PerkRow, type SnapshotPerk } from "./entities.js";

export function perkToProto(row: PerkRow): Perk {
  return create(PerkSchema, {
    id: row.id,
    owner: row.owner,
    kind: PERK_KINDS[row.kind as Kind],
    name: row.name,
    description: row.description,
    productBindings: row.productBindings,
    status: PERK_STATUS[row.status as "active" | "retired"],
    revision: BigInt(row.revision),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    retiredAt: row.retiredAt ? timestampFromDate(row.retiredAt) : undefined,
  });
}

/** A perk's fields as a published version keeps them. */
export function snapshotOf(row: PerkRow): SnapshotPerk {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    description: row.description,
    productBindings: row.productBindings,
  };
}

export function versionPerkToProto(perk: SnapshotPerk): VersionPerk {
  return create(VersionPerkSchema, {
    perkId: perk.id,
    kind: PERK_KINDS[perk.kind as Kind],
    name: perk.name,
    description: perk.description,
    productBindings: perk.productBindings,
  });
}

/** The perk of this id, or null; locked for the rest of the transaction when asked. */
export function perkById(em: EntityManager, id: string, lock = false): Promise<PerkRow | null> {
  return em.findOne(PerkRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** How many active perks an owner keeps (retired ones take no room). */
export const activePerkCount = (em: EntityManager, owner: string) => em.count(PerkRow, { owner, status: "active" });

/** Writes a new perk. */
export async function insertPerk(em: EntityManager, perk: RequiredEntityData<PerkRow>): Promise<PerkRow> {
  const row = em.create(PerkRow, perk);
  await em.flush();
  return row;
}

/** Writes changes to a perk in the caller's transaction. */
export async function changePerk(em: EntityManager, row: PerkRow, changes: Partial<PerkRow>): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/**
 * The perks a version of `owner`'s plan names, in order: each must exist and
 * belong to the owner or the network (422 naming the field), and be active
 * (409 perk.retired: a retired perk goes into no new version or publication).
 */
export async function perksForPlan(em: EntityManager, owner: string, ids: string[], field: string): Promise<PerkRow[]> {
  if (ids.length === 0) return [];
  const rows = await em.find(PerkRow, { id: { $in: ids } });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = byId.get(id);
    if (!row || (row.owner !== owner && row.owner !== NETWORK)) {
      throw problem(
        422,
        "request.invalid",
        `${field} names ${id}, which is no perk of the plan's owner or the network`,
        { field },
      );
    }
    if (row.status === "retired")
      throw problem(409, "perk.retired", `The perk ${id} is retired: it goes into no new plan version.`, {
        perk_id: id,
      });
    return row;
  });
}
