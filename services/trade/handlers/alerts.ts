import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AlertDeliveryPageSchema,
  AlertKind,
  AlertReadResultSchema,
  AlertRulePageSchema,
  AlertRuleResultSchema,
  Direction,
} from "../../../gen/pf/trade/v1/alerts_pb.js";
import type { TradeService } from "../../../gen/pf/trade/v1/trade_pb.js";
import { DeletedResultSchema } from "../../../gen/pf/trade/v1/watchlists_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { TradeContext } from "../context.js";
import { deleteRule, deliveriesOf, insertRule, ownRule, ruleAnswers, ruleCount, rulesOf } from "../db/alerts.js";
import { deliveryAnswers } from "../db/deliveries.js";
import { instrumentBySymbol } from "../db/instruments.js";
import { ruleFields } from "../domain/alerts.js";
import { requireSymbol } from "../domain/symbols.js";
import { wordOf } from "../domain/vocabulary.js";

type AlertHandlers = Pick<
  ServiceImpl<typeof TradeService>,
  "listAlerts" | "createAlert" | "deleteAlert" | "listDeliveries"
>;

/**
 * Alert rules and deliveries of the acting person; another person's rule
 * answers 404 like a missing one. Editing a rule is deleting and creating one.
 */
export function alertHandlers(ctx: TradeContext): AlertHandlers {
  return {
    async listAlerts(request, call) {
      const owner = actingPerson(call);
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const { items, nextCursor } = page(await rulesOf(em, owner, before, limit + 1), limit, (row) => [row.id]);
      const rules = await ruleAnswers(em, items);
      return create(AlertReadResultSchema, {
        result: { case: "rules", value: create(AlertRulePageSchema, { rules, nextCursor }) },
      });
    },

    async createAlert(request, call) {
      const owner = actingPerson(call);
      const symbol = requireSymbol("symbol", request.symbol);
      const fields = ruleFields({
        ...request,
        kind: wordOf(AlertKind, request.kind),
        direction: wordOf(Direction, request.direction),
      });
      const limit = ctx.settings.rulesPerPerson;
      return ctx.transaction(async (em) => {
        const instrument = await instrumentBySymbol(em, symbol);
        if (!instrument) throw problem(404, "instrument.not_found", `There is no instrument ${symbol}.`, { symbol });
        await requireBelowCap(
          em,
          {
            name: "trade.alert_rules",
            owner,
            limit,
            code: "alert.limit",
            detail: `A person keeps at most ${limit} alert rules; delete one to make room.`,
          },
          () => ruleCount(em, owner),
        );
        const row = await insertRule(em, {
          ...fields,
          id: newId("alr"),
          owner,
          instrumentId: instrument.id,
          createdAt: ctx.clock.now(),
        });
        const [rule] = await ruleAnswers(em, [row]);
        return create(AlertRuleResultSchema, { rule });
      });
    },

    async deleteAlert(request, call) {
      const owner = actingPerson(call);
      return ctx.transaction(async (em) => {
        const row = await ownRule(em, request.id, owner);
        if (!row) throw problem(404, "alert.not_found", "There is no such alert rule.");
        // Its deliveries stay: they are what made each delivery at most once, and the person's history.
        await deleteRule(em, row.id);
        return create(DeletedResultSchema, { id: row.id, deleted: true });
      });
    },

    async listDeliveries(request, call) {
      const owner = actingPerson(call);
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const { items, nextCursor } = page(await deliveriesOf(em, owner, before, limit + 1), limit, (row) => [row.id]);
      const deliveries = await deliveryAnswers(em, items);
      return create(AlertReadResultSchema, {
        result: { case: "deliveries", value: create(AlertDeliveryPageSchema, { deliveries, nextCursor }) },
      });
    },
  };
}
