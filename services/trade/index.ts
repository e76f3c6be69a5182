import { TradeAdminService } from "../../gen/pf/trade/v1/admin_pb.js";
import { MarketContextService } from "../../gen/pf/trade/v1/context_pb.js";
import { TradeService } from "../../gen/pf/trade/v1/trade_pb.js";
import { editorRelation } from "../kit/editors/editors.js";
import { editorHandlers } from "../kit/editors/handlers.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { documentConsumers } from "./consumers/documents.js";
import { tradeContext } from "./context.js";
import { contextEntities } from "./db/context-entities.js";
import { entities } from "./db/entities.js";
import { Migration20261203000000_trade } from "./db/migrations/Migration20261203000000_trade.js";
import { Migration20261203000100_trade_context } from "./db/migrations/Migration20261203000100_trade_context.js";
import { alertHandlers } from "./handlers/alerts.js";
import { contextHandlers } from "./handlers/context.js";
import { instrumentHandlers } from "./handlers/instruments.js";
import { observationHandlers } from "./handlers/observations.js";
import { resolveHandlers } from "./handlers/resolve.js";
import { watchlistHandlers } from "./handlers/watchlists.js";

/** The market-context service (spec part 2): instruments, observations, watchlists, alerts, context. */
export const trade = defineService({
  key: "trade",
  schema: {
    entities: [...entities, ...contextEntities],
    migrations: [
      { name: "Migration20261203000000_trade", class: Migration20261203000000_trade },
      { name: "Migration20261203000100_trade_context", class: Migration20261203000100_trade_context },
    ],
  },
  context: tradeContext,
  protos: [TradeService, MarketContextService, TradeAdminService],
  implementations(ctx) {
    return [
      implement(TradeService, {
        ...alertHandlers(ctx),
        ...instrumentHandlers(ctx),
        ...resolveHandlers(ctx),
        ...observationHandlers(ctx),
        ...watchlistHandlers(ctx),
      }),
      implement(MarketContextService, contextHandlers(ctx)),
      implement(TradeAdminService, editorHandlers(ctx)),
    ];
  },
  consumers: documentConsumers,
  holds: ["ai.run.read"], // verifies the run AI output names
  relations: { editor: editorRelation },
});
