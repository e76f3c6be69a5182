import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  EntityResolveResultSchema,
  SummaryProposeResultSchema,
  SummaryPublishResultSchema,
} from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import type { ReviewSummariesService } from "../../../gen/pf/reviews/v1/summaries_pb.js";
import { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { type AiRule, approverOf, authorOf } from "../../kit/auth/authorship.js";
import { verifiedAuthor } from "../../kit/auth/ai-runs.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import { maxLength } from "../../kit/handler/text.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { callerOf, principalOf } from "../../kit/auth/principal.js";
import { revisionToProto } from "../db/answers.js";
import { recordHistory, treeOf } from "../db/catalog.js";
import type { EntityRow } from "../db/entities.js";
import { signalIdsWithin } from "../db/signals.js";
import {
  APPROVED_STATES,
  insertRevision,
  publishedOf,
  publishRevision,
  reviewRevision,
  revisionOf,
  revisionsOf,
  unpublishRevision,
} from "../db/summaries.js";
import { refreshEntities } from "../db/search.js";
import { checkSummary, citationsOf, type PointInput } from "../domain/summaries.js";
import { summaryChanged } from "../events.js";
import { entityOf, requireActive, requireRef } from "../entity-refs.js";

/** The AI workflow whose proposals this service takes. */
export const SUMMARY_WORKFLOW = "reviews.summarize_entity";
const AI_RULE: AiRule = { workflow: SUMMARY_WORKFLOW, code: "summary.workflow_required" };
const NOTE_MAX = 1000;
/** Proposals per entity per hour (designed: the spec gives no number). */
const PROPOSALS_PER_HOUR = 30;

/**
 * Summaries (hardest rule 3): AI proposals citing this entity's signals, a
 * person's review, publication. A proposal is never published by the propose
 * call and stays off pages and search (db/search.ts reads the published
 * revision only) until a person approved and published it.
 */
export function summaryHandlers(ctx: ServiceContext): ServiceImpl<typeof ReviewSummariesService> {
  const ai = ctx.client(AiService);
  /** Every citation names a signal of the entity (or of one merged into it): 422 summary.citation_invalid. */
  const checkCitations = async (
    em: EntityManager,
    entity: EntityRow,
    points: { pros: PointInput[]; cons: PointInput[] },
  ) => {
    const cited = citationsOf(points);
    const known = await signalIdsWithin(em, cited, await treeOf(em, entity.id));
    const wrong = cited.find((id) => !known.has(id));
    if (wrong !== undefined)
      throw problem(422, "summary.citation_invalid", `${wrong} is no signal of ${entity.id}.`, { signal_id: wrong });
  };

  /** A revision's new state: in the entity's history and as reviews.summary.<state>. */
  const changed = async (
    em: EntityManager,
    entityId: string,
    revision: number,
    state: string,
    by: string,
    at: Date,
  ) => {
    await recordHistory(em, { entityId, action: `summary_${state}`, actor: by, at, detail: `revision ${revision}` });
    await summaryChanged(em, { entityId, revision, state, at });
  };

  return {
    async proposeSummary(request, call) {
      const ref = requireRef("ref", request.ref);
      const claim = { workflow: request.workflow, runId: request.runId, stubProvider: request.stubProvider };
      const claimed = authorOf(call, claim, AI_RULE);
      const summary = checkSummary("", request);
      const author = await verifiedAuthor(ai, claimed, AI_RULE);
      const principal = principalOf(call);
      const once = idempotencyOf(call, request, { scope: `summary:${principal.sub}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const entity = requireActive(await entityOf(em, ref, true));
          await checkCitations(em, entity, summary);
          await rateLimit(
            em,
            [{ name: "reviews.summary.propose", key: entity.id, limit: PROPOSALS_PER_HOUR, windowMs: 3_600_000 }],
            at,
          );
          const row = await insertRevision(em, entity, { ...summary, author, state: "proposed", at });
          await summaryChanged(em, { entityId: entity.id, revision: row.revision, state: "proposed", at });
          return create(SummaryProposeResultSchema, { revision: revisionToProto(row) });
        }),
      );
    },

    async publishSummary(request, call) {
      const ref = requireRef("ref", request.ref);
      const action = request.action;
      if (action.case === undefined)
        throw invalid("action", "one of write, approve, reject, publish or unpublish is required");
      const person = approverOf(call);
      const written = action.case === "write" ? checkSummary("write", action.value) : undefined;
      const decision = action.case !== "write" ? action.value : undefined;
      const number = decision?.revision ?? 0; // 1 or more: declared
      const note = decision ? maxLength(`${action.case}.note`, decision.note.trim(), NOTE_MAX) : "";
      if (note !== "" && (action.case === "publish" || action.case === "unpublish"))
        throw invalid(`${action.case}.note`, "a note goes with approve or reject");
      const once = idempotencyOf(call, request, { scope: `summary:${person}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const entity = requireActive(await entityOf(em, ref, true));
          if (written) {
            await checkCitations(em, entity, written);
            const row = await insertRevision(em, entity, {
              ...written,
              author: { kind: "person", person },
              state: "approved",
              approver: person,
              at,
            });
            await changed(em, entity.id, row.revision, "approved", person, at);
            return answer(em, entity, row);
          }
          const row = await revisionOf(em, entity.id, number);
          if (!row)
            throw problem(404, "summary.not_found", `${entity.id} has no summary revision ${number}.`, {
              revision: number,
            });
          const from = row.state;
          // Publishing the published revision, or unpublishing an unpublished one, changes nothing (a retry).
          if (
            (action.case === "publish" && from === "published") ||
            (action.case === "unpublish" && from === "unpublished")
          )
            return answer(em, entity, row);
          const refuse = (code: string, why: string) =>
            problem(409, code, `Revision ${number} is ${from}: ${why}`, { state: from });
          switch (action.case) {
            case "approve":
            case "reject":
              if (from !== "proposed")
                throw refuse("summary.not_proposed", "only a proposal awaiting review is reviewed.");
              // A split may have taken signals it cites since it was proposed.
              if (action.case === "approve") await checkCitations(em, entity, row);
              await reviewRevision(em, row, { approved: action.case === "approve", by: person, at, note });
              break;
            case "publish": {
              if (from !== "approved" && from !== "unpublished")
                throw refuse("summary.not_approved", "only a revision a person approved is published.");
              await checkCitations(em, entity, row);
              const displaced = await publishRevision(em, row, at);
              if (displaced) await changed(em, entity.id, displaced.revision, "unpublished", person, at);
              break;
            }
            case "unpublish":
              if (from !== "published")
                throw refuse("summary.not_published", "only the published revision is unpublished.");
              await unpublishRevision(em, row);
              break;
          }
          await changed(em, entity.id, number, row.state, person, at);
          await refreshEntities(em, [entity.id], at);
          return answer(em, entity, row);
        }),
      );
    },

    async getSummary(request, call) {
      const em = ctx.orm.em.fork();
      const entity = await entityOf(em, requireRef("ref", request.ref));
      const editor = callerOf(call).admittedBy === "editor";
      const [published, revisions] = await Promise.all([
        publishedOf(em, entity.id),
        revisionsOf(em, entity.id, editor ? undefined : APPROVED_STATES),
      ]);
      return create(EntityResolveResultSchema, {
        result: {
          case: "summary",
          value: {
            published: published ? revisionToProto(published) : undefined,
            revisions: revisions.map(revisionToProto),
          },
        },
      });
    },

    async getSummaryRevision(request, call) {
      const em = ctx.orm.em.fork();
      const entity = await entityOf(em, requireRef("ref", request.ref));
      const row = request.revision >= 1 ? await revisionOf(em, entity.id, request.revision) : null;
      // A proposal or rejected revision is for editors: to anyone else it does not exist.
      if (!row || (!APPROVED_STATES.includes(row.state) && callerOf(call).admittedBy !== "editor"))
        throw problem(404, "summary.not_found", `${entity.id} has no summary revision ${request.revision}.`, {
          revision: request.revision,
        });
      return create(EntityResolveResultSchema, { result: { case: "summaryRevision", value: revisionToProto(row) } });
    },
  };
}

async function answer(em: EntityManager, entity: EntityRow, row: Parameters<typeof revisionToProto>[0]) {
  const published = await publishedOf(em, entity.id);
  return create(SummaryPublishResultSchema, {
    revision: revisionToProto(row),
    published: published ? revisionToProto(published) : undefined,
  });
}
