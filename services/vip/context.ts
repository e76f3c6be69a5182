import type { Client } from "@connectrpc/connect";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { ownerResolvers, type OwnerResolver } from "./owners.js";
import { vipSettings, type VipSettings } from "./settings.js";

/** Built once per membership instance by the host: the service context, its settings, its billing client and who owns gateable resources. */
export interface VipContext extends ServiceContext {
  settings: VipSettings;
  billing: Client<typeof BillingService>;
  /** By service key, how to learn who owns one of its resources (`owners.ts`). */
  owners: ReadonlyMap<string, OwnerResolver>;
}

export function vipContext(base: ServiceContext): VipContext {
  return {
    ...base,
    settings: vipSettings(base.config),
    billing: base.client(BillingService),
    owners: ownerResolvers(base),
  };
}
