import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  type Item,
  type ItemRevision,
  ItemRevisionSchema,
  ItemSchema,
  type Provenance,
  ProvenanceSchema,
} from "../../../gen/pf/sources/v1/items_pb.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";
import { ItemRevisionRow, ItemRow } from "./entities.js";

export const itemNotFound = () => problem(404, "item.not_found", "There is no such item.");

/**
 * The change order, allocated under the counter row's lock, held to the commit: a transaction that takes a number
 * commits before the next one can take the one after, so a consumer reading `after=N` never skips a change that
 * commits later. Take it before locking any item (the lock order: source, counter, items).
 */
export interface ChangeCounter {
  next(): bigint;
  /** Writes the last number given back; call before the transaction commits. */
  save(): Promise<void>;
}

export async function lockChangeCounter(em: EntityManager): Promise<ChangeCounter> {
  const [row] = await sql<{ value: string }>(em, `select value from {change_counter} where id = 1 for update`);
  let value = BigInt(row.value);
  const start = value;
  return {
    next: () => ++value,
    async save() {
      if (value !== start) await sql(em, `update {change_counter} set value = ? where id = 1`, [value]);
    },
  };
}

/** The item of this identity in its source, removed ones included (what makes removal sticky). */
export const itemByIdentity = (em: EntityManager, sourceKey: string, identity: string) =>
  em.findOne(ItemRow, { sourceKey, identity });

/** A new item taken in, written with the caller's next write (`writeItems`). */
export const newItem = (em: EntityManager, item: RequiredEntityData<ItemRow>): ItemRow => em.create(ItemRow, item);

/** Writes the items taken in or changed (and their revisions) in the caller's transaction. */
export async function writeItems(em: EntityManager): Promise<void> {
  await em.flush();
}

/** Writes changes to an item in the caller's transaction. */
export async function changeItem(em: EntityManager, row: ItemRow, changes: Partial<ItemRow>): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** The item, locked when asked; 404 when missing. */
export async function itemById(em: EntityManager, id: string, lock = false): Promise<ItemRow> {
  const row = await em.findOne(ItemRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row) throw itemNotFound();
  return row;
}

/** The source of an item (a source with items is never deleted); 404 when there is no such item. */
export async function sourceKeyOfItem(em: EntityManager, id: string): Promise<string> {
  const rows = await sql<{ source_key: string }>(em, `select source_key from {items} where id = ?`, [id]);
  if (rows.length === 0) throw itemNotFound();
  return rows[0].source_key;
}

/** Items by change order after `after`, of one source or all, removed ones only when asked. */
export function itemsPage(
  em: EntityManager,
  filter: { sourceKey?: string; after: bigint; includeRemoved: boolean },
  limit: number,
): Promise<ItemRow[]> {
  return em.find(
    ItemRow,
    {
      changeOrder: { $gt: filter.after },
      ...(filter.sourceKey ? { sourceKey: filter.sourceKey } : {}),
      ...(filter.includeRemoved ? {} : { removedAt: null }),
    },
    { orderBy: { changeOrder: "asc" }, limit: limit + 1 },
  );
}

/** An item's revisions, oldest first. */
export const revisionsOf = (em: EntityManager, itemId: string) =>
  em.find(ItemRevisionRow, { itemId }, { orderBy: { revision: "asc" } });

/** Records the item's current content as its revision (insert-only). */
export function recordRevision(em: EntityManager, row: ItemRow): void {
  em.create(ItemRevisionRow, {
    itemId: row.id,
    revision: row.revision,
    canonicalUrl: row.canonicalUrl,
    title: row.title,
    summary: row.summary,
    content: row.content,
    publishedAt: row.publishedAt,
    identifiers: row.identifiers,
    filingType: row.filingType,
    changeOrder: row.changeOrder,
    contentHash: row.contentHash,
    rawBodyHash: row.rawBodyHash,
    parserVersion: row.parserVersion,
    retrievedAt: row.retrievedAt,
    terms: row.terms,
  });
}

function provenanceOf(sourceKey: string, row: ItemRow | ItemRevisionRow): Provenance {
  return create(ProvenanceSchema, {
    sourceKey,
    canonicalUrl: row.canonicalUrl,
    retrievedAt: timestampFromDate(row.retrievedAt),
    contentHash: row.contentHash,
    rawBodyHash: row.rawBodyHash,
    parserVersion: row.parserVersion,
    terms: row.terms,
  });
}

export function itemToProto(row: ItemRow): Item {
  return create(ItemSchema, {
    id: row.id,
    sourceKey: row.sourceKey,
    canonicalUrl: row.canonicalUrl,
    externalId: row.externalId,
    title: row.title,
    summary: row.summary,
    content: row.content,
    publishedAt: row.publishedAt ? timestampFromDate(row.publishedAt) : undefined,
    identifiers: row.identifiers,
    filingType: row.filingType,
    evidenceUrl: row.evidenceUrl,
    revision: row.revision,
    changeOrder: BigInt(row.changeOrder),
    provenance: provenanceOf(row.sourceKey, row),
    removed: row.removedAt != null,
    removedReason: row.removedReason ?? "",
    removedAt: row.removedAt ? timestampFromDate(row.removedAt) : undefined,
    createdAt: timestampFromDate(row.createdAt),
  });
}

export function revisionToProto(sourceKey: string, row: ItemRevisionRow): ItemRevision {
  return create(ItemRevisionSchema, {
    revision: row.revision,
    title: row.title,
    summary: row.summary,
    content: row.content,
    publishedAt: row.publishedAt ? timestampFromDate(row.publishedAt) : undefined,
    provenance: provenanceOf(sourceKey, row),
    changeOrder: BigInt(row.changeOrder),
  });
}
