import type { EntityManager } from "@mikro-orm/postgresql";
import { type ItemChanged, ItemChangedSchema } from "../../../gen/pf/sources/v1/events_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { candidatesByName } from "../db/catalog.js";
import { queueItem } from "../db/queue.js";
import { resolveIdentifiers } from "../db/resolve.js";
import { insertSignal } from "../db/signals.js";
import { type AliasKind, nameKey, normalizeAlias } from "../domain/identifiers.js";

/** The identifiers an item states, normalised as aliases are; one that does not parse is left out. */
function identifiersOf(event: ItemChanged): { kind: AliasKind; normalized: string }[] {
  const stated = (kind: string) =>
    Object.entries(event.identifiers).find(([key]) => key.toLowerCase() === kind)?.[1] ?? "";
  const raw: [AliasKind, string][] = [
    ["url", event.canonicalUrl],
    ["gtin", stated("gtin") || stated("ean") || stated("upc")],
    ["sku", stated("sku")],
    ["mpn", stated("mpn")],
    ["external_id", event.externalId],
    ["source", event.sourceKey],
  ];
  return raw.flatMap(([kind, value]) => {
    if (value.trim() === "") return [];
    try {
      return [{ kind, normalized: normalizeAlias(kind, kind, value) }];
    } catch {
      return [];
    }
  });
}

/**
 * A sources item about a reviewed entity (designed, analysis A.3): its
 * identifiers naming exactly one entity record a mention signal with the
 * item's provenance; naming several, or only a name matching entities, put
 * it in the resolution queue for an editor (a name alone is never a match);
 * an item about nothing reviewed is left alone.
 */
async function applyItem(event: ItemChanged, em: EntityManager, ctx: ServiceContext): Promise<void> {
  const at = ctx.clock.now();
  const { roots } = await resolveIdentifiers(em, identifiersOf(event));
  const base = { itemId: event.itemId, sourceKey: event.sourceKey, url: event.canonicalUrl, title: event.title, at };
  if (roots.length === 1) {
    await insertSignal(em, {
      entityId: roots[0],
      kind: "mention",
      score: 0,
      scale: 0,
      text: event.title,
      sourceKey: event.sourceKey,
      sourceRef: event.itemId,
      url: event.canonicalUrl,
      observedAt: null,
      ingestedBy: "svc:sources",
      itemId: event.itemId,
      at,
    });
    return;
  }
  if (roots.length > 1) return queueItem(em, { ...base, reason: "conflict", candidates: roots });
  const candidates = (await candidatesByName(em, nameKey(event.title))).filter((row) => row.state === "active");
  if (candidates.length > 0)
    await queueItem(em, { ...base, reason: "name_only", candidates: candidates.map((row) => row.id) });
}

/** sources.item.created: a new item may be about an entity. */
export const itemCreatedConsumer = consumer<ServiceContext, typeof ItemChangedSchema>({
  name: "reviews-items",
  subject: "sources.item.created",
  event: ItemChangedSchema,
  from: "all",
  handle: (event, em, _meta, ctx) => applyItem(event, em, ctx),
});
