import type { Client } from "@connectrpc/connect";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import type { ServiceContext } from "../kit/runtime/module.js";
import { vipSettings, type VipSettings } from "./settings.js";

/** Built once per membership instance by the host: the service context, its settings and its billing client. */
export interface VipContext extends ServiceContext {
  settings: VipSettings;
  billing: Client<typeof BillingService>;
}

export function vipContext(base: ServiceContext): VipContext {
  return { ...base, settings: vipSettings(base.config), billing: base.client(BillingService) };
}
