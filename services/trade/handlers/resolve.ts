import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ResolveOutcome, ResolveResultSchema } from "../../../gen/pf/trade/v1/instruments_pb.js";
import type { TradeService } from "../../../gen/pf/trade/v1/trade_pb.js";
import type { TradeContext } from "../context.js";
import { readInstruments, resolvedIds } from "../db/resolve.js";
import { resolveSteps } from "../domain/resolve.js";

type ResolveHandlers = Pick<ServiceImpl<typeof TradeService>, "resolveInstrument">;

/**
 * Resolution: CIK, then ticker, then exact normalised name; the first step
 * that finds anything decides. Several instruments at that step (share
 * classes under one CIK, a ticker on two exchanges, a repeated name) answer
 * ambiguous with the candidates and none chosen. Open to anonymous callers,
 * who are limited per client address (the route's declared `resolve` limit).
 */
export function resolveHandlers(ctx: TradeContext): ResolveHandlers {
  return {
    async resolveInstrument(request) {
      const steps = resolveSteps(request);
      for (const step of steps) {
        const ids = await resolvedIds(ctx, step.by, step.value);
        if (ids.length === 0) continue;
        const found = await readInstruments(ctx, ids);
        if (found.length === 1) {
          return create(ResolveResultSchema, {
            outcome: ResolveOutcome.MATCHED,
            instrument: found[0],
            matchedBy: step.by,
          });
        }
        return create(ResolveResultSchema, {
          outcome: ResolveOutcome.AMBIGUOUS,
          candidates: found,
          matchedBy: step.by,
        });
      }
      return create(ResolveResultSchema, { outcome: ResolveOutcome.NONE });
    },
  };
}
