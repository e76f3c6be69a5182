import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  ItemChangedSchema,
  ItemRemovedSchema,
  RunFinishedSchema,
  SourceChangedSchema,
} from "../../gen/pf/sources/v1/events_pb.js";
import type { Source } from "../../gen/pf/sources/v1/registry_pb.js";
import type { FetchRun } from "../../gen/pf/sources/v1/runs_pb.js";
import { recordEvent, recordEvents } from "../kit/events/outbox.js";
import type { ItemRow } from "./db/entities.js";

/** The subjects this service publishes (events.proto), for news, reviews and trade downstream. */
export const subjects = {
  itemCreated: "sources.item.created",
  itemRevised: "sources.item.revised",
  itemRemoved: "sources.item.removed",
  runFinished: "sources.run.finished",
  sourceChanged: "sources.source.changed",
} as const;

/** What happened to a source. */
export type SourceChange = "created" | "changed" | "enabled" | "disabled" | "deleted" | "stale";

/** sources.item.created (revision 1) or sources.item.revised, in the transaction that wrote the revision. */
export function itemChanged(em: EntityManager, row: ItemRow) {
  return recordEvent(em, row.revision === 1 ? subjects.itemCreated : subjects.itemRevised, ItemChangedSchema, {
    itemId: row.id,
    sourceKey: row.sourceKey,
    canonicalUrl: row.canonicalUrl,
    revision: row.revision,
    changeOrder: BigInt(row.changeOrder),
    contentHash: row.contentHash,
    title: row.title,
    publishedAt: row.publishedAt ? timestampFromDate(row.publishedAt) : undefined,
    identifiers: row.identifiers,
    filingType: row.filingType,
    externalId: row.externalId,
  });
}

/** sources.item.removed, with the reason. */
export function itemRemoved(em: EntityManager, row: ItemRow) {
  return recordEvent(em, subjects.itemRemoved, ItemRemovedSchema, {
    itemId: row.id,
    sourceKey: row.sourceKey,
    canonicalUrl: row.canonicalUrl,
    reason: row.removedReason ?? "",
    changeOrder: BigInt(row.changeOrder),
  });
}

/** sources.run.finished, for each run that ended (a fetch applied, or the reaper's abandoned runs). */
export function runsFinished(em: EntityManager, runs: FetchRun[]) {
  return recordEvents(
    em,
    subjects.runFinished,
    RunFinishedSchema,
    runs.map((run) => ({ run })),
  );
}

/** sources.source.changed: the source as it is now (as it was, when deleted). */
export function sourceChanged(em: EntityManager, source: Source, change: SourceChange) {
  return recordEvent(em, subjects.sourceChanged, SourceChangedSchema, { source, change });
}
