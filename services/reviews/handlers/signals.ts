import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  EntityManageResultSchema,
  EntityResolveResultSchema,
  SignalWriteResultSchema,
} from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import type { ReviewSignalsService } from "../../../gen/pf/reviews/v1/signals_pb.js";
import { principalOf, relatedActor } from "../../kit/auth/principal.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { maxLength } from "../../kit/handler/text.js";
import { optionalUrl } from "../../kit/handler/urls.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { entityAnswer, queueItemToProto, signalToProto } from "../db/answers.js";
import { recordHistory, rootOf, treeOf } from "../db/catalog.js";
import { lockedQueueItem, pendingPage, recordQueueDecision } from "../db/queue.js";
import { deleteExclusion, insertExclusion, insertSignal, signalById, signalsOf } from "../db/signals.js";
import { entityOf, requireActive, requireRef } from "../entity-refs.js";

const KEY = /^[a-z0-9][a-z0-9._-]{0,63}$/i;
const REF_MAX = 256;

/** Signals with provenance, exclusions from aggregates, and the resolution queue. */
export function signalHandlers(ctx: ServiceContext): ServiceImpl<typeof ReviewSignalsService> {
  return {
    async writeSignal(request, call) {
      const ref = requireRef("ref", request.ref);
      // Declared: kind rating or mention, a source key, a source_ref not blank, text at most 4000 characters.
      if (request.kind === "rating") {
        if (request.scale < 2 || request.scale > 100) throw invalid("scale", "scale is from 2 to 100");
        if (request.score < 0 || request.score > request.scale) throw invalid("score", "score is from 0 to scale");
      } else if (request.score !== 0 || request.scale !== 0) throw invalid("score", "a mention carries no score");
      const sourceRef = maxLength("source_ref", request.sourceRef.trim(), REF_MAX);
      const url = optionalUrl("url", request.url, ["https", "http"]);
      const { text } = request;
      const input = {
        kind: request.kind as "rating" | "mention",
        score: request.score,
        scale: request.scale,
        text,
        sourceKey: request.sourceKey.toLowerCase(),
        sourceRef,
        url,
        observedAt: request.observedAt ? timestampDate(request.observedAt) : null,
        ingestedBy: principalOf(call).sub,
        itemId: "",
      };
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const entity = await entityOf(em, ref);
        const { row, created } = await insertSignal(em, { ...input, entityId: entity.id, at });
        if (!created) {
          const same =
            row.entityId === entity.id &&
            row.kind === input.kind &&
            row.score === input.score &&
            row.scale === input.scale &&
            row.text === input.text &&
            row.url === input.url;
          if (!same)
            throw problem(
              409,
              "signal.conflict",
              `A different signal is recorded for ${input.sourceKey} ${sourceRef}.`,
              {
                signal_id: row.id,
              },
            );
          answerStatus(call, 200);
        }
        return create(SignalWriteResultSchema, { signal: signalToProto(row) });
      });
    },

    async listSignals(request) {
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const entity = await entityOf(em, requireRef("ref", request.ref));
      const tree = await treeOf(em, entity.id);
      const { items, nextCursor } = page(await signalsOf(em, tree, limit, before), limit, (row) => [row.id]);
      return create(EntityResolveResultSchema, {
        result: { case: "signals", value: { signals: items.map(signalToProto), nextCursor } },
      });
    },

    async addExclusion(request, call) {
      const ref = requireRef("ref", request.ref);
      const signalId = request.signalId.trim();
      const sourceKey = request.source.trim().toLowerCase();
      if ((signalId === "") === (sourceKey === ""))
        throw invalid("signal_id", "exactly one of signal_id or source is required");
      if (sourceKey !== "" && !KEY.test(sourceKey)) throw invalid("source", "source is a source key");
      const reason = request.reason.trim(); // not blank, at most 1000 characters: declared
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const entity = requireActive(await entityOf(em, ref, true));
        if (signalId !== "") {
          const signal = await signalById(em, signalId);
          if (!signal || !(await treeOf(em, entity.id)).includes(signal.entityId))
            throw problem(404, "signal.not_found", `${entity.id} has no signal ${signalId}.`, { field: "signal_id" });
        }
        const row = await insertExclusion(em, { entityId: entity.id, signalId, sourceKey, reason, by, at });
        await recordHistory(em, {
          entityId: entity.id,
          action: "excluded",
          actor: by,
          at,
          detail: `${signalId || `source ${sourceKey}`}: ${reason} (${row.id})`,
        });
        return create(EntityManageResultSchema, { result: { case: "entity", value: await entityAnswer(em, entity) } });
      });
    },

    async removeExclusion(request, call) {
      const ref = requireRef("ref", request.ref);
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const entity = requireActive(await entityOf(em, ref, true));
        const row = await deleteExclusion(em, entity.id, request.id);
        if (!row)
          throw problem(404, "exclusion.not_found", `${entity.id} has no exclusion ${request.id}.`, { id: request.id });
        await recordHistory(em, { entityId: entity.id, action: "exclusion_removed", actor: by, at, detail: row.id });
        return create(EntityManageResultSchema, { result: { case: "entity", value: await entityAnswer(em, entity) } });
      });
    },

    async listQueue(request, call) {
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const after = decodeTextCursor(request.cursor, 1)?.[0];
      const { items, nextCursor } = page(await pendingPage(ctx.orm.em.fork(), limit, after), limit, (row) => [row.id]);
      return create(EntityResolveResultSchema, {
        result: { case: "queue", value: { items: items.map(queueItemToProto), nextCursor } },
      });
    },

    async decideQueueItem(request, call) {
      const confirm = request.confirm.trim();
      if ((confirm === "") === !request.ignore)
        throw invalid("confirm", "exactly one of confirm (an entity) or ignore is required");
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const item = await lockedQueueItem(em, request.id);
        if (!item)
          throw problem(404, "queue_item.not_found", `There is no queue item ${request.id}.`, { id: request.id });
        if (item.state !== "pending")
          throw problem(409, "queue_item.decided", `${item.id} is ${item.state} already.`, { state: item.state });
        if (request.ignore) {
          await recordQueueDecision(em, item, { state: "ignored", by, at });
        } else {
          const { root } = await rootOf(em, await entityOf(em, confirm));
          const { row } = await insertSignal(em, {
            entityId: root.id,
            kind: "mention",
            score: 0,
            scale: 0,
            text: item.title,
            sourceKey: item.sourceKey,
            sourceRef: item.itemId,
            url: item.url,
            observedAt: null,
            ingestedBy: by,
            itemId: item.itemId,
            at,
          });
          await recordQueueDecision(em, item, { state: "confirmed", entityId: root.id, signalId: row.id, by, at });
          await recordHistory(em, { entityId: root.id, action: "item_confirmed", actor: by, at, detail: item.itemId });
        }
        return create(EntityManageResultSchema, { result: { case: "queueItem", value: queueItemToProto(item) } });
      });
    },
  };
}
