import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ReviewCorrectionsService } from "../../../gen/pf/reviews/v1/corrections_pb.js";
import { CorrectionSubmitResultSchema, EntityManageResultSchema } from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import { actingPerson, relatedActor } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import { maxLength } from "../../kit/handler/text.js";
import { optionalUrl } from "../../kit/handler/urls.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { correctionToProto } from "../db/answers.js";
import { correctionById, correctionsPage, insertCorrection, triageCorrection } from "../db/corrections.js";
import { correctionSubmitted } from "../events.js";
import { entityOf, requireRef } from "../entity-refs.js";

const NOTE_MAX = 1000;
/** Submissions per person per day (designed). */
const PER_DAY = 20;

/**
 * Corrections (hardest rule 5): never published; only editors read the queue
 * (anyone else is 403 auth.editor_required, the submitter included); the
 * evidence URL is optional, checked for its shape and never fetched.
 */
export function correctionHandlers(ctx: ServiceContext): ServiceImpl<typeof ReviewCorrectionsService> {
  return {
    async submitCorrection(request, call) {
      const ref = requireRef("ref", request.ref);
      const person = actingPerson(call);
      // Declared: target_kind one of entity, alias, signal, summary, aggregate; text not blank, at most 4000.
      const targetKind = request.targetKind || "entity";
      const targetId = maxLength("target_id", request.targetId.trim(), 128);
      if ((targetKind === "entity" || targetKind === "aggregate") !== (targetId === ""))
        throw invalid("target_id", "target_id names the alias, signal or summary revision, and nothing else");
      const { text } = request;
      // Only checked as a URL: the service never fetches it.
      const evidenceUrl = optionalUrl("evidence_url", request.evidenceUrl, ["https", "http"]);
      const once = idempotencyOf(call, request, { scope: `correction:${person}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          const entity = await entityOf(em, ref);
          await rateLimit(
            em,
            [{ name: "reviews.correction.submit", key: person, limit: PER_DAY, windowMs: 86_400_000 }],
            at,
          );
          const row = await insertCorrection(em, {
            entityId: entity.id,
            targetKind,
            targetId,
            text,
            evidenceUrl,
            by: person,
            at,
          });
          await correctionSubmitted(em, { correctionId: row.id, entityId: entity.id, at });
          return create(CorrectionSubmitResultSchema, { correction: correctionToProto(row) });
        }),
      );
    },

    async listCorrections(request, call) {
      // Declared: state one of open, accepted, rejected, duplicate when given; limit 1-200.
      const limit = request.limit ?? DEFAULT_LIMIT;
      const after = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await correctionsPage(ctx.orm.em.fork(), request.state, limit, after);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(EntityManageResultSchema, {
        result: { case: "corrections", value: { corrections: items.map(correctionToProto), nextCursor } },
      });
    },

    async getCorrection(request, call) {
      const row = await correctionById(ctx.orm.em.fork(), request.id);
      if (!row) throw correctionNotFound(request.id);
      return create(EntityManageResultSchema, { result: { case: "correction", value: correctionToProto(row) } });
    },

    async triageCorrection(request, call) {
      // Of the states (declared), a triage sets one of these three.
      if (!["accepted", "rejected", "duplicate"].includes(request.state))
        throw invalid("state", "state is accepted, rejected or duplicate");
      const note = maxLength("editor_note", request.editorNote.trim(), NOTE_MAX);
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const row = await correctionById(em, request.id);
        if (!row) throw correctionNotFound(request.id);
        await triageCorrection(em, row, { state: request.state, note, by, at: ctx.clock.now() });
        return create(EntityManageResultSchema, { result: { case: "correction", value: correctionToProto(row) } });
      });
    },
  };
}

function correctionNotFound(id: string): Error {
  return problem(404, "correction.not_found", `There is no correction ${id}.`, { id });
}
