import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ObservationResultSchema, ObservationSchema } from "../../../gen/pf/trade/v1/observations_pb.js";
import type { TradeService } from "../../../gen/pf/trade/v1/trade_pb.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { TradeContext } from "../context.js";
import { crossedRules, deliveryAnswers, insertDeliveries } from "../db/deliveries.js";
import { idsByTicker, instrumentById } from "../db/instruments.js";
import { insertObservation, observationByRef, observationToProto, sameStatement } from "../db/observations.js";
import { observationStatement } from "../domain/observations.js";
import { requireSymbol } from "../domain/symbols.js";
import { alertsTriggered } from "../events.js";

type ObservationHandlers = Pick<ServiceImpl<typeof TradeService>, "recordObservation">;

/**
 * Observations from services only (declared: no people, no apps). Idempotent
 * per (source_key, source_ref): an identical replay answers the first (200), a
 * different value 409 observation.conflict with the existing one. A new one
 * evaluates the instrument's threshold rules in the same transaction: the
 * deliveries and their trade.alert.triggered events commit with it.
 */
export function observationHandlers(ctx: TradeContext): ObservationHandlers {
  return {
    async recordObservation(request, call) {
      const symbol = requireSymbol("symbol", request.symbol);
      const statement = observationStatement(request);
      return ctx.transaction(async (em) => {
        const [instrumentId, more] = await idsByTicker(em, symbol);
        if (instrumentId === undefined || more !== undefined) {
          throw problem(404, "instrument.not_found", `There is no instrument ${symbol}.`, { symbol });
        }
        const instrument = await instrumentById(em, instrumentId);
        // One writer per series at a time: each sees the previous latest value the one before it committed.
        await advisoryLock(
          em,
          `trade.series:${instrumentId}:${statement.metric}:${statement.unit}:${statement.currency}`,
        );
        const stated = { ...statement, id: newId("obs"), instrumentId, recordedAt: ctx.clock.now() };
        if (!(await insertObservation(em, stated))) {
          const existing = await observationByRef(em, stated.sourceKey, stated.sourceRef);
          if (!existing) throw new Error("an observation reference was taken but is not readable");
          const first = await instrumentById(em, existing.instrumentId);
          const observation = observationToProto(existing, first.symbol);
          if (!sameStatement(existing, stated)) {
            throw problem(
              409,
              "observation.conflict",
              "A different value was recorded under this (source_key, source_ref).",
              {
                observation: toJson(ObservationSchema, observation, {
                  useProtoFieldName: true,
                  alwaysEmitImplicit: true,
                }) as JsonObject,
              },
            );
          }
          answerStatus(call, 200);
          return create(ObservationResultSchema, { observation });
        }
        const row = await observationByRef(em, stated.sourceKey, stated.sourceRef);
        if (!row) throw new Error("the observation just recorded is not readable");
        const delivered = await insertDeliveries(em, await crossedRules(em, row), stated.recordedAt);
        await alertsTriggered(em, await deliveryAnswers(em, delivered));
        return create(ObservationResultSchema, { observation: observationToProto(row, instrument.symbol) });
      });
    },
  };
}
