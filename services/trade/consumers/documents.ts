import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { ItemChanged } from "../../../gen/pf/sources/v1/events_pb.js";
import { sourceItemConsumers } from "../../kit/events/source-items.js";
import type { TradeContext } from "../context.js";
import { deliveryAnswers, documentRules, insertDeliveries } from "../db/deliveries.js";
import { removeItemDocuments, upsertDocument } from "../db/documents.js";
import { idsByCik, idsByTicker } from "../db/instruments.js";
import { normalizeCik, normalizeSymbol } from "../domain/symbols.js";
import { alertsTriggered } from "../events.js";

/** The item's identifier of a kind, whatever the case of its key. */
const identifier = (event: ItemChanged, kind: string) =>
  Object.entries(event.identifiers).find(([key]) => key.toLowerCase() === kind)?.[1] ?? "";

/** The instruments an item is about: by its CIK, else by its ticker; none when it names neither. */
async function instrumentsOf(em: EntityManager, event: ItemChanged): Promise<string[]> {
  const cik = normalizeCik(identifier(event, "cik"));
  const byCik = cik === "" ? [] : await idsByCik(em, cik);
  if (byCik.length > 0) return byCik;
  const ticker = normalizeSymbol(identifier(event, "ticker"));
  return ticker === "" ? [] : idsByTicker(em, ticker);
}

/**
 * A sources item about an instrument becomes its document (designed, analysis
 * C.1), and delivers the instrument's new_document rules and the filing_type
 * rules of its form type, once per (rule, document): a revision of the item is
 * the same document, so it delivers only to rules that have not had it.
 */
async function applyItem(event: ItemChanged, em: EntityManager, ctx: TradeContext): Promise<void> {
  const at = ctx.clock.now();
  for (const instrumentId of await instrumentsOf(em, event)) {
    const document = await upsertDocument(em, {
      instrumentId,
      itemId: event.itemId,
      sourceKey: event.sourceKey,
      canonicalUrl: event.canonicalUrl,
      title: event.title,
      filingType: event.filingType,
      publishedAt: event.publishedAt ? timestampDate(event.publishedAt) : null,
      revision: event.revision,
      receivedAt: at,
    });
    if (!document) continue; // removed upstream
    const delivered = await insertDeliveries(em, await documentRules(em, document), at);
    await alertsTriggered(em, await deliveryAnswers(em, delivered));
  }
}

/**
 * A new item or revision, perhaps a document; a removal sets the item's documents aside (sticky, as upstream),
 * deliveries made stay.
 */
export const documentConsumers = sourceItemConsumers<TradeContext>("documents", {
  changed: applyItem,
  removed: (event, em, ctx) => removeItemDocuments(em, event.itemId, event.reason, ctx.clock.now()),
});
