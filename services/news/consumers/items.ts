import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { ItemChanged, ItemRemoved } from "../../../gen/pf/sources/v1/events_pb.js";
import { sourceItemConsumers } from "../../kit/events/source-items.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { insertCluster, membershipsOf, setMembership } from "../db/clusters.js";
import { markDuplicate, markRemoved, matchOf, upsertItem } from "../db/items.js";
import { insertFlag } from "../db/revisions.js";
import { storiesCiting, touchStory } from "../db/stories.js";
import { ingestExplanation, titleKey } from "../domain/clusters.js";
import { storyChanged, subjects } from "../events.js";

/** Raises an upstream flag on every story with a live entry for the item. */
async function flagStories(em: EntityManager, item: string, kind: string, note: string, at: Date) {
  for (const { story_id, number, state } of await storiesCiting(em, item)) {
    const flagId = await insertFlag(em, { story: story_id, kind, item, number, note, blocking: false }, at);
    await touchStory(em, story_id, at);
    await storyChanged(em, subjects.flagged, { id: story_id, state }, at, { flagId });
  }
}

/**
 * A sources item news has not clustered joins the cluster of the first member
 * it matches (same canonical URL: a duplicate; else the same normalised
 * title), or opens one; the membership keeps its explanation.
 */
async function applyItem(event: ItemChanged, em: EntityManager, ctx: ServiceContext): Promise<void> {
  const at = ctx.clock.now();
  const outcome = await upsertItem(
    em,
    {
      id: event.itemId,
      sourceKey: event.sourceKey,
      canonicalUrl: event.canonicalUrl,
      title: event.title,
      publishedAt: event.publishedAt ? timestampDate(event.publishedAt) : null,
      revision: event.revision,
      changeOrder: event.changeOrder,
    },
    at,
  );
  if (outcome === "stale") return;
  if (!(await membershipsOf(em, [event.itemId])).has(event.itemId)) {
    const match = await matchOf(em, {
      id: event.itemId,
      canonicalUrl: event.canonicalUrl,
      titleKey: titleKey(event.title),
    });
    if (match?.kind === "canonical_url") await markDuplicate(em, event.itemId, match.member);
    const cluster = match?.clusterId ?? (await insertCluster(em, at));
    await setMembership(em, event.itemId, cluster, ingestExplanation(match, at));
  }
  if (outcome === "updated")
    await flagStories(em, event.itemId, "source_changed_upstream", `Revision ${event.revision} upstream.`, at);
}

/**
 * sources.item.removed: the item is removed upstream (sticky); every story
 * resting on it is flagged, and its publish gate refuses from now on.
 */
async function removeItem(event: ItemRemoved, em: EntityManager, ctx: ServiceContext): Promise<void> {
  const at = ctx.clock.now();
  const removal = { id: event.itemId, sourceKey: event.sourceKey, canonicalUrl: event.canonicalUrl };
  if (await markRemoved(em, { ...removal, reason: event.reason, changeOrder: event.changeOrder }, at))
    await flagStories(em, event.itemId, "source_removed_upstream", event.reason, at);
}

/** A new item to dedupe and cluster, its revisions flagging the stories resting on it, and its removal. */
export const itemConsumers = sourceItemConsumers<ServiceContext>("items", { changed: applyItem, removed: removeItem });
