import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { EntityMergeResultSchema, EntitySplitResultSchema } from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import type { ReviewsService } from "../../../gen/pf/reviews/v1/entities_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { aggregateAnswer, entityAnswer, revisionToProto } from "../db/answers.js";
import {
  changeEntity,
  currentMerges,
  endMerge,
  entitiesById,
  insertMerge,
  recordHistory,
  rootOf,
  treeOf,
} from "../db/catalog.js";
import type { EntityRow, SummaryRevisionRow } from "../db/entities.js";
import { signalIdsOf, signalIdsWithin } from "../db/signals.js";
import { flagRevisions, insertRevision, revisionsCiting } from "../db/summaries.js";
import { refreshEntities } from "../db/search.js";
import { citationsOf, withoutCitations } from "../domain/summaries.js";
import { entityChanged, summaryChanged } from "../events.js";
import { entityOf, requireRef } from "../entity-refs.js";

type MergeHandlers = Pick<ServiceImpl<typeof ReviewsService>, "mergeEntity" | "splitEntity">;

/**
 * Merge and split (hardest rule 1). A merge rewrites nothing: the merged
 * entity keeps its aliases, its signals keep their attribution, and only its
 * state and merged_into link change, so a split restores exactly what was.
 */
export function mergeHandlers(ctx: ServiceContext): MergeHandlers {
  return {
    async mergeEntity(request, call) {
      const ref = requireRef("ref", request.ref);
      const into = requireRef("into", request.into);
      const reason = request.reason.trim(); // not blank, at most 1000 characters: declared
      // The editor person: declared ACTOR_PERSON with the editor relation.
      const by = actingPerson(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const [source, target] = await lockedPair(em, ref, into);
        if (source.id === target.id) throw mergeCycle(source.id);
        for (const [row, field] of [
          [source, "ref"],
          [target, "into"],
        ] as const)
          if (row.state === "merged")
            throw problem(409, "entity.merged", `${row.id} is merged into ${row.mergedInto ?? ""}.`, {
              field,
              merged_into: row.mergedInto ?? "",
            });
        if ((await treeOf(em, source.id)).includes(target.id)) throw mergeCycle(source.id);
        await insertMerge(em, { entityId: source.id, intoId: target.id, by, at, reason });
        await changeEntity(em, source, { state: "merged", mergedInto: target.id }, at);
        await recordHistory(em, {
          entityId: source.id,
          action: "merged",
          actor: by,
          at,
          detail: `into ${target.id}: ${reason}`,
        });
        await recordHistory(em, {
          entityId: target.id,
          action: "merged_from",
          actor: by,
          at,
          detail: `${source.id}: ${reason}`,
        });
        await entityChanged(em, { entityId: source.id, action: "merged", otherEntityId: target.id, actor: by, at });
        await refreshEntities(em, [source.id, target.id], at);
        const { root } = await rootOf(em, target);
        return create(EntityMergeResultSchema, {
          entity: await entityAnswer(em, source),
          aggregate: await aggregateAnswer(em, root.id, await treeOf(em, root.id)),
        });
      });
    },

    async splitEntity(request, call) {
      const ref = requireRef("ref", request.ref);
      const reason = request.reason.trim(); // not blank, at most 1000 characters: declared
      // The editor person: declared ACTOR_PERSON with the editor relation.
      const by = actingPerson(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const source = await entityOf(em, ref, true);
        const merge = (await currentMerges(em, [source.id])).get(source.id);
        if (source.state !== "merged" || !merge)
          throw problem(409, "entity.not_merged", `${source.id} is not merged: there is nothing to split.`);
        const [target] = await entitiesById(em, [merge.intoId]);
        // The former target and every entity above it lose the split-off signals.
        const { root, chain } = await rootOf(em, target);
        const ancestors = [...chain, root.id];
        const splitOff = await treeOf(em, source.id);
        await endMerge(em, source, merge, { by, at, reason });
        const flagged = await flagSummaries(em, ancestors, splitOff, source.id, at);
        await recordHistory(em, {
          entityId: source.id,
          action: "split",
          actor: by,
          at,
          detail: `from ${target.id}: ${reason}`,
        });
        await recordHistory(em, {
          entityId: target.id,
          action: "split_from",
          actor: by,
          at,
          detail: `${source.id}: ${reason}`,
        });
        await entityChanged(em, { entityId: source.id, action: "split", otherEntityId: target.id, actor: by, at });
        await refreshEntities(em, [source.id, target.id], at);
        return create(EntitySplitResultSchema, {
          entity: await entityAnswer(em, source),
          aggregate: await aggregateAnswer(em, source.id, splitOff),
          formerTarget: await entityAnswer(em, target),
          formerTargetAggregate: await aggregateAnswer(em, root.id, await treeOf(em, root.id)),
          flagged: flagged.map(revisionToProto),
        });
      });
    },
  };
}

/**
 * After a split: every summary revision of the former target (and the
 * entities above it) citing a split-off signal is flagged, and for each
 * entity a pending revision without those citations awaits review (written
 * by the service, state proposed); the published summary stays as it is
 * until an editor acts. Answers the flagged and the pending revisions.
 */
async function flagSummaries(
  em: EntityManager,
  entityIds: string[],
  splitOff: string[],
  sourceId: string,
  at: Date,
): Promise<SummaryRevisionRow[]> {
  const cited = await revisionsCiting(em, entityIds, await signalIdsOf(em, splitOff));
  const gone = await signalIdsWithin(
    em,
    cited.flatMap((row) => citationsOf(row)),
    splitOff,
  );
  const answers: SummaryRevisionRow[] = [];
  for (const entityId of entityIds) {
    const rows = cited.filter((row) => row.entityId === entityId);
    if (rows.length === 0) continue;
    await flagRevisions(em, rows, `split: cites signals of ${sourceId}, split off`);
    for (const row of rows) await summaryChanged(em, { entityId, revision: row.revision, state: "flagged", at });
    answers.push(...rows);
    const basis = rows.find((row) => row.state === "published") ?? rows[rows.length - 1];
    const kept = withoutCitations(basis, gone);
    if (kept.pros.length + kept.cons.length === 0) continue;
    const [entity] = await entitiesById(em, [entityId]);
    const pending = await insertRevision(em, entity, {
      overview: basis.overview,
      ...kept,
      author: { kind: "system", service: "svc:reviews" },
      state: "proposed",
      at,
    });
    await summaryChanged(em, { entityId, revision: pending.revision, state: "proposed", at });
    answers.push(pending);
  }
  return answers;
}

/** Both entities of a merge, locked in id order (two merges never wait on each other in a cycle). */
async function lockedPair(em: EntityManager, ref: string, into: string): Promise<[EntityRow, EntityRow]> {
  const first = await entityOf(em, ref);
  const second = await entityOf(em, into);
  const [a, b] = first.id < second.id ? [first, second] : [second, first];
  await entityOf(em, a.id, true);
  await entityOf(em, b.id, true);
  return [first, second];
}

function mergeCycle(id: string): Error {
  return problem(409, "entity.merge_cycle", `${id} cannot be merged into itself or into an entity merged into it.`);
}
