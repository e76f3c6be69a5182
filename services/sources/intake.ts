import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../kit/handler/ids.js";
import { type ChangeCounter, itemByIdentity, lockChangeCounter, newItem, recordRevision } from "./db/items.js";
import type { ItemRow } from "./db/entities.js";
import { contentHashOf, type Entry, identityOf, type Retrieval } from "./domain/items.js";
import { itemChanged } from "./events.js";

/** What an intake did, item by item and in total. */
export interface Intake {
  items: ItemRow[];
  counts: { itemsNew: number; itemsRevised: number; itemsUnchanged: number; itemsSkippedRemoved: number };
}

/**
 * Takes entries of one source (a fetch's, or a person's manual items), each with its retrieval, into its items, in the caller's transaction,
 * which has locked the source row (so intakes of one source never interleave). An identity seen before is a new
 * revision only when its content hash changed; a removed item is never revived (skipped_removed). Each change gets
 * the next change order and its event, in this transaction.
 */
export async function takeEntries(
  em: EntityManager,
  sourceKey: string,
  entries: { entry: Entry; retrieval: Retrieval }[],
): Promise<Intake> {
  const counts = { itemsNew: 0, itemsRevised: 0, itemsUnchanged: 0, itemsSkippedRemoved: 0 };
  const items: ItemRow[] = [];
  const seen = new Map<string, ItemRow>();
  let counter: ChangeCounter | undefined;
  const nextChange = async () => (counter ??= await lockChangeCounter(em)).next();
  for (const { entry, retrieval } of entries) {
    const identity = identityOf(entry);
    const contentHash = contentHashOf(entry);
    const found = seen.get(identity) ?? (await itemByIdentity(em, sourceKey, identity));
    if (found?.removedAt) {
      counts.itemsSkippedRemoved++;
      items.push(found);
      continue;
    }
    if (found && found.contentHash === contentHash) {
      counts.itemsUnchanged++;
      items.push(found);
      continue;
    }
    const content = {
      canonicalUrl: entry.canonicalUrl,
      externalId: entry.externalId,
      title: entry.title,
      summary: entry.summary,
      content: entry.content,
      publishedAt: entry.publishedAt,
      identifiers: entry.identifiers,
      filingType: entry.filingType,
      evidenceUrl: entry.evidenceUrl,
      contentHash,
      ...retrieval,
      changeOrder: await nextChange(),
    };
    let row: ItemRow;
    if (found) {
      row = Object.assign(found, content, { revision: found.revision + 1 });
      counts.itemsRevised++;
    } else {
      row = newItem(em, {
        id: newId("itm"),
        sourceKey,
        identity,
        revision: 1,
        createdAt: retrieval.retrievedAt,
        ...content,
      });
      counts.itemsNew++;
    }
    seen.set(identity, row);
    recordRevision(em, row);
    await itemChanged(em, row);
    items.push(row);
  }
  await counter?.save();
  return { items, counts };
}
