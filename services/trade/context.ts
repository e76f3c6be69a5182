import type { Client } from "@connectrpc/connect";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { tradeSettings, type TradeSettings } from "./settings.js";

/** Built once per trade instance by the host: the service context, the trade settings and the AI client. */
export interface TradeContext extends ServiceContext {
  settings: TradeSettings;
  /** Verifies the runs AI output names (`ai.run.read`). */
  ai: Client<typeof AiService>;
}

export function tradeContext(base: ServiceContext): TradeContext {
  return { ...base, settings: tradeSettings(base.config), ai: base.client(AiService) };
}
